// reduce_scatter_perf: strataReduceScatter, nccl-tests style. Size is the whole input; count is per rank.
#include "common/collective_benches.h"

int main(int argc, char** argv) {
  return strata::perf::RunCollectiveBench(argc, argv, *strata::perf::CollectiveBenchByKey("reducescatter"));
}
