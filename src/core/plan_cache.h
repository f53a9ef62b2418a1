// What the communicator's plan caches share (communicator.cc, communicator_trials.cc).
#pragma once

#include <memory>

#include "core/status.h"
#include "exec/plan_run.h"
#include "transport/connection.h"

namespace strata {

// Resolves the connections of a plan just cached at `it`; one that cannot run leaves the cache.
template <typename Cache>
Status ResolveCached(Cache& cache, typename Cache::iterator it, ConnectionTable* conns) {
  it->second.run = std::make_unique<PlanRun>(it->second.plan, conns);
  Status st = it->second.run->init();
  if (!st.ok()) cache.erase(it);
  return st;
}

}  // namespace strata
