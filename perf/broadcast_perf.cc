// broadcast_perf: strataBroadcast, nccl-tests style. Every rank ends with the root's input.
#include "common/collective_benches.h"

int main(int argc, char** argv) {
  return strata::perf::RunCollectiveBench(argc, argv, *strata::perf::CollectiveBenchByKey("broadcast"));
}
