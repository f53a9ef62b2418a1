// all_gather_perf: strataAllGather, nccl-tests style. Size is the gathered output; count is per rank.
#include "common/collective_benches.h"

int main(int argc, char** argv) {
  return strata::perf::RunCollectiveBench(argc, argv, *strata::perf::CollectiveBenchByKey("allgather"));
}
