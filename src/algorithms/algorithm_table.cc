#include "algorithms/algorithm_table.h"

#include <cstring>

#include "algorithms/algorithms.h"
#include "exec/host_reduce.h"

namespace strata {

namespace {

constexpr uint32_t kAllReduce = CollBit(CollKind::AllReduce), kBroadcast = CollBit(CollKind::Broadcast),
                   kReduce = CollBit(CollKind::Reduce), kAllGather = CollBit(CollKind::AllGather),
                   kReduceScatter = CollBit(CollKind::ReduceScatter), kAlltoAll = CollBit(CollKind::AlltoAll);

const AlgoInfo kTable[kNumAlgos] = {
    {AlgoId::Ring, "ring", "pipelined ring per channel: reduce-scatter then allgather around the ranks",
     kAllReduce | kAllGather | kReduceScatter, "none", true},
    {AlgoId::Chain, "chain", "pipelined chain from (or to) the root along the ring order", kBroadcast | kReduce,
     "none", true},
    {AlgoId::Direct, "direct", "every rank sends its whole buffer to every peer and reduces all in rank order",
     kAllReduce, "the buffer must fit in one FIFO (slots x slot bytes); larger runs the ring", true},
    {AlgoId::Tree, "tree",
     "double binary tree: two edge-disjoint trees each carry half the data, pipelined in chunks",
     kAllReduce | kBroadcast | kReduce,
     "one tree carries everything when no edge-disjoint pair exists (fewer than 7 ranks in the trees, or 9)",
     true},
    {AlgoId::Rd, "rd",
     "recursive doubling: log2 p exchanges of the whole vector (allreduce) or of the blocks gathered so far; "
     "reduce-scatter runs recursive halving (as rhd)",
     kAllReduce | kAllGather | kReduceScatter, "non-power-of-two counts fold the extra ranks into partners", true},
    {AlgoId::Rhd, "rhd", "recursive halving then doubling (Rabenseifner); its halves serve reduce-scatter and allgather",
     kAllReduce | kAllGather | kReduceScatter, "non-power-of-two counts fold the extra ranks into partners", true},
    {AlgoId::OneShot, "oneshot",
     "every rank copies its input into its peer-mapped window, then reads all peers' windows in place and reduces "
     "(or gathers) in rank order",
     kAllReduce | kAllGather | kReduceScatter,
     "every rank on one host over shared memory, and the input within a window (STRATA_WINDOW_BYTES); else "
     "direct or ring (allreduce), ring (the others)",
     true},
    {AlgoId::TwoShot, "twoshot",
     "allreduce: each rank reduces one part of all peers' windows into its own, then every rank copies every "
     "part; reduce-scatter and allgather run as oneshot",
     kAllReduce | kAllGather | kReduceScatter, "as oneshot, with twice the buffer within a window (allreduce)", true},
    {AlgoId::Hier, "hier",
     "two levels: within each host, between hosts among ranks of the same local index, within each host again",
     kAllReduce | kAllGather | kReduceScatter | kBroadcast | kReduce,
     "two or more hosts with the same number (two or more) of ranks each; else the flat ring or chain", true},
    {AlgoId::HierLeader, "hier_leader",
     "reduce to a leader per host, allreduce among leaders, broadcast within each host (small messages)",
     kAllReduce, "as hier", true},
    {AlgoId::Pairwise, "pairwise", "one send and one receive queue per peer, all concurrent", kAlltoAll, "none",
     true},
};

}  // namespace

const AlgoInfo (&AlgoTable())[kNumAlgos] { return kTable; }

const AlgoInfo& GetAlgoInfo(AlgoId id) { return kTable[static_cast<int>(id)]; }

bool AlgoByName(const std::string& name, AlgoId* out) {
  for (const AlgoInfo& a : kTable)
    if (name == a.name) {
      *out = a.id;
      return true;
    }
  return false;
}

bool AlgoServes(AlgoId id, CollKind kind) { return (GetAlgoInfo(id).collectives & CollBit(kind)) != 0; }

std::string AlgoCollectivesText(AlgoId id) {
  std::string out;
  for (int k = 0; k < kNumCollKinds; ++k) {
    if (!AlgoServes(id, static_cast<CollKind>(k))) continue;
    if (!out.empty()) out += ", ";
    out += CollKindKey(static_cast<CollKind>(k));
  }
  return out;
}

std::string AlgoNamesText() {
  std::string out;
  for (const AlgoInfo& a : kTable) {
    if (!out.empty()) out += ", ";
    out += a.name;
  }
  return out;
}

const char* CollKindKey(CollKind kind) {
  switch (kind) {
    case CollKind::AllReduce: return "allreduce";
    case CollKind::Broadcast: return "broadcast";
    case CollKind::Reduce: return "reduce";
    case CollKind::AllGather: return "allgather";
    case CollKind::ReduceScatter: return "reducescatter";
    case CollKind::AlltoAll: return "alltoall";
  }
  return "?";
}

bool CollKindByKey(const std::string& key, CollKind* out) {
  for (int k = 0; k < kNumCollKinds; ++k)
    if (key == CollKindKey(static_cast<CollKind>(k))) {
      *out = static_cast<CollKind>(k);
      return true;
    }
  if (key == "reduce_scatter") {
    *out = CollKind::ReduceScatter;
    return true;
  }
  return false;
}

Plan BuildPlanWith(AlgoId id, const CollDesc& desc, const PlanGeometry& geo) {
  const CollKind k = desc.kind;
  switch (id) {
    case AlgoId::Ring:
      if (k == CollKind::AllReduce) return RingAllReducePlan(desc, geo);
      if (k == CollKind::AllGather) return RingAllGatherPlan(desc, geo);
      if (k == CollKind::ReduceScatter) return RingReduceScatterPlan(desc, geo);
      break;
    case AlgoId::Chain:
      if (k == CollKind::Broadcast) return ChainBroadcastPlan(desc, geo);
      if (k == CollKind::Reduce) return ChainReducePlan(desc, geo);
      break;
    case AlgoId::Direct:
      // Larger buffers would fill the FIFOs before anyone receives (see direct_plans.cc).
      if (k == CollKind::AllReduce) {
        if (desc.count * DataTypeSize(desc.dtype) <= geo.slotBytes * geo.nslots) return DirectAllReducePlan(desc, geo);
        return RingAllReducePlan(desc, geo);
      }
      break;
    case AlgoId::Tree:
      if (k == CollKind::AllReduce) return TreeAllReducePlan(desc, geo);
      if (k == CollKind::Broadcast) return TreeBroadcastPlan(desc, geo);
      if (k == CollKind::Reduce) return TreeReducePlan(desc, geo);
      break;
    case AlgoId::Rd:
    case AlgoId::Rhd: {
      Plan plan;
      if (k == CollKind::AllReduce) return id == AlgoId::Rd ? RdAllReducePlan(desc, geo) : RhdAllReducePlan(desc, geo);
      if (k == CollKind::AllGather) plan = RdAllGatherPlan(desc, geo);
      else if (k == CollKind::ReduceScatter) plan = RhdReduceScatterPlan(desc, geo);
      else break;
      if (geo.nranks > 1) plan.algorithm = GetAlgoInfo(id).name;  // one plan serves both names
      return plan;
    }
    case AlgoId::Hier:
      if (k == CollKind::AllReduce) return HierAllReducePlan(desc, geo);
      if (k == CollKind::AllGather) return HierAllGatherPlan(desc, geo);
      if (k == CollKind::ReduceScatter) return HierReduceScatterPlan(desc, geo);
      if (k == CollKind::Broadcast) return HierBroadcastPlan(desc, geo);
      if (k == CollKind::Reduce) return HierReducePlan(desc, geo);
      break;
    case AlgoId::HierLeader:
      if (k == CollKind::AllReduce) return HierLeaderAllReducePlan(desc, geo);
      break;
    case AlgoId::Pairwise:
      if (k == CollKind::AlltoAll) return PairwiseAlltoAllPlan(desc, geo);
      break;
    case AlgoId::OneShot:
      if (k == CollKind::AllReduce || k == CollKind::AllGather || k == CollKind::ReduceScatter)
        return OneShotPlan(desc, geo);
      break;
    case AlgoId::TwoShot:
      if (k == CollKind::AllReduce || k == CollKind::AllGather || k == CollKind::ReduceScatter)
        return TwoShotPlan(desc, geo);
      break;
  }
  return Plan();  // not served: ParseAlgoSpec never lets this happen
}

}  // namespace strata
