// Plan generators: pure functions (collective, geometry) -> Plan for one rank.
#pragma once

#include "algorithms/collective.h"
#include "algorithms/algo_spec.h"
#include "algorithms/plan.h"

namespace strata {

// Builds this rank's plan with the forced algorithm when `forced` names one for this collective,
// else with the default choice (direct for small allreduce, rings and chains otherwise).
Plan BuildCollectivePlan(const CollDesc& desc, const PlanGeometry& geo, const ForcedAlgos& forced = ForcedAlgos());

// The generators, one per algorithm.
Plan RingAllReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan RingReduceScatterPlan(const CollDesc& desc, const PlanGeometry& geo);
Plan RingAllGatherPlan(const CollDesc& desc, const PlanGeometry& geo);
Plan ChainBroadcastPlan(const CollDesc& desc, const PlanGeometry& geo);
Plan ChainReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan DirectAllReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan PairwiseAlltoAllPlan(const CollDesc& desc, const PlanGeometry& geo);
Plan TreeAllReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan TreeBroadcastPlan(const CollDesc& desc, const PlanGeometry& geo);
Plan TreeReducePlan(const CollDesc& desc, const PlanGeometry& geo);
// The trees those plans build on `nranks` ranks (a rooted collective's hang under its root): how many share the data
// (2 where DisjointTreePair finds a pair), the hops from the deepest rank to the top, and the most children a rank has
// in one tree. Few ranks make a line: a rooted collective on 4 ranks runs root <- a <- b <- c, the chain's shape.
struct TreeShape {
  int ntrees = 1;
  int depth = 0;
  int maxChildren = 0;
};
TreeShape TreeShapeOf(int nranks, bool rooted);
Plan RdAllReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan RhdAllReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan RhdReduceScatterPlan(const CollDesc& desc, const PlanGeometry& geo);  // recursive halving
Plan RdAllGatherPlan(const CollDesc& desc, const PlanGeometry& geo);       // recursive doubling
Plan HierAllReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan HierReduceScatterPlan(const CollDesc& desc, const PlanGeometry& geo);
Plan HierAllGatherPlan(const CollDesc& desc, const PlanGeometry& geo);
Plan HierBroadcastPlan(const CollDesc& desc, const PlanGeometry& geo);
Plan HierReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan HierLeaderAllReducePlan(const CollDesc& desc, const PlanGeometry& geo);
Plan OneShotPlan(const CollDesc& desc, const PlanGeometry& geo);  // allreduce, reduce-scatter, allgather
Plan TwoShotPlan(const CollDesc& desc, const PlanGeometry& geo);

// Largest piece a ring step may carry so that a ring of FIFOs never fills up (see ring_plans.cc).
uint64_t RingChunkElems(const PlanGeometry& geo, size_t elemSize);

}  // namespace strata
