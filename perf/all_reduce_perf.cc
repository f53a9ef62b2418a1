// all_reduce_perf: strataAllReduce, nccl-tests style. Every rank ends with the reduction of all inputs.
#include "common/collective_benches.h"

int main(int argc, char** argv) {
  return strata::perf::RunCollectiveBench(argc, argv, *strata::perf::CollectiveBenchByKey("allreduce"));
}
