// The quantized-plan simulator: runs every rank's QuantPlan in one thread over in-memory slot FIFOs with
// the real executor (QuantPlanRun), and reports deadlocks. The quantized counterpart of plan_simulator.h.
#pragma once

#include <vector>

#include "algorithms/quant_plans.h"
#include "core/status.h"

namespace strata {

struct QuantSimRank {
  std::vector<char> send;
  std::vector<char> recv;
};

// Runs one quantized collective (`desc`, algorithm `algo`, spec `p`) on geo.nranks simulated ranks; `call`
// numbers the call as a communicator would. `ranks[r]` holds rank r's buffers, already sized; results land
// in recv. `inPlace` runs it in place (NCCL's offsets). `algorithm`, when given, gets the name that ran.
Status SimulateQuantCollective(QuantAlgo algo, const CollDesc& desc, const PlanGeometry& geo,
                               const math::QuantParams& p, std::vector<QuantSimRank>* ranks, uint64_t call = 0,
                               bool inPlace = false, std::string* algorithm = nullptr);

}  // namespace strata
