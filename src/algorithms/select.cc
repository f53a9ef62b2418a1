// The algorithm choice: the forced one (STRATA_ALGO or the config field) when there is one, else
// the foundation's default: direct exchange for small allreduce, rings and chains otherwise. The
// cost-model selector replaces the default.
#include "algorithms/algorithm_table.h"
#include "algorithms/algorithms.h"
#include "exec/host_reduce.h"

namespace strata {

Plan BuildCollectivePlan(const CollDesc& desc, const PlanGeometry& geo, const ForcedAlgos& forced) {
  AlgoId id;
  if (forced.get(desc.kind, &id) && GetAlgoInfo(id).implemented && AlgoServes(id, desc.kind))
    return BuildPlanWith(id, desc, geo);
  switch (desc.kind) {
    case CollKind::AllReduce:
      if (desc.count * DataTypeSize(desc.dtype) <= geo.directMaxBytes) return DirectAllReducePlan(desc, geo);
      return RingAllReducePlan(desc, geo);
    case CollKind::Broadcast: return ChainBroadcastPlan(desc, geo);
    case CollKind::Reduce: return ChainReducePlan(desc, geo);
    case CollKind::AllGather: return RingAllGatherPlan(desc, geo);
    case CollKind::ReduceScatter: return RingReduceScatterPlan(desc, geo);
    case CollKind::AlltoAll: return PairwiseAlltoAllPlan(desc, geo);
  }
  return Plan();
}

const char* CollKindName(CollKind kind) {
  switch (kind) {
    case CollKind::AllReduce: return "AllReduce";
    case CollKind::Broadcast: return "Broadcast";
    case CollKind::Reduce: return "Reduce";
    case CollKind::AllGather: return "AllGather";
    case CollKind::ReduceScatter: return "ReduceScatter";
    case CollKind::AlltoAll: return "AlltoAll";
  }
  return "?";
}

}  // namespace strata
