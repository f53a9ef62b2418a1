// Plan generators: pure functions (collective, geometry) -> Plan for one rank.
#pragma once

#include "algorithms/collective.h"
#include "algorithms/plan.h"

namespace strata {

// Chooses the algorithm for the collective and builds this rank's plan.
Plan BuildCollectivePlan(const CollDesc& desc, const PlanGeometry& geo);

// The generators, one per algorithm.
Plan RingAllReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan RingReduceScatterPlan(const CollDesc& desc, const PlanGeometry& geo);
Plan RingAllGatherPlan(const CollDesc& desc, const PlanGeometry& geo);
Plan ChainBroadcastPlan(const CollDesc& desc, const PlanGeometry& geo);
Plan ChainReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan DirectAllReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan PairwiseAlltoAllPlan(const CollDesc& desc, const PlanGeometry& geo);

// Largest piece a ring step may carry so that a ring of FIFOs never fills up (see ring_plans.cc).
uint64_t RingChunkElems(const PlanGeometry& geo, size_t elemSize);

}  // namespace strata
