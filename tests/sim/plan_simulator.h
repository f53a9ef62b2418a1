// The plan simulator: runs the plans of every rank in one thread over in-memory slot FIFOs, with
// the real executor (PlanRun), and reports deadlocks. No sockets, no processes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "algorithms/algo_spec.h"
#include "algorithms/collective.h"
#include "algorithms/plan.h"
#include "core/status.h"

namespace strata {

struct SimRankBuffers {
  std::vector<char> send;
  std::vector<char> recv;
};

// Runs one collective on `geo.nranks` simulated ranks (geo.rank is ignored). `buffers[r]` holds rank
// r's send and receive buffers, already sized; results land in recv. `inPlace` runs the collective
// in place (the receive buffer doubles as the send buffer, at the collective's in-place offset).
// Fails with a message naming the blocked ranks when no rank can make progress. `forced` picks the
// algorithm as STRATA_ALGO would; `algorithm`, when given, receives rank 0's plan's algorithm name.
Status SimulateCollective(const CollDesc& desc, const PlanGeometry& geo, std::vector<SimRankBuffers>* buffers,
                          bool inPlace = false, const ForcedAlgos& forced = ForcedAlgos(),
                          std::string* algorithm = nullptr);

// Runs arbitrary per-rank plans (already built) bound to the given buffer tables.
Status SimulatePlans(const std::vector<Plan>& plans, const std::vector<std::vector<void*>>& bindings,
                     const PlanGeometry& geo);

}  // namespace strata
