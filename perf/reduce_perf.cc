// reduce_perf: strataReduce, nccl-tests style. Only the root's output is defined, so only it is checked.
#include "common/collective_benches.h"

int main(int argc, char** argv) {
  return strata::perf::RunCollectiveBench(argc, argv, *strata::perf::CollectiveBenchByKey("reduce"));
}
