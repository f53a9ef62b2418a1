// The CollectiveBench of each collective a perf tool runs, by its STRATA_ALGO key.
#pragma once

#include "collective_bench.h"

namespace strata::perf {

// "allreduce", "allgather", "reducescatter", "broadcast" or "reduce"; nullptr for any other key.
const CollectiveBench* CollectiveBenchByKey(const char* key);

}  // namespace strata::perf
