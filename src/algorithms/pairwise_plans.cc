// Pairwise-exchange alltoall: one send queue and one receive queue per peer, all running
// concurrently, so no ordering between peers can deadlock.
#include "algorithms/algorithms.h"
#include "algorithms/plan_builder.h"

namespace strata {

Plan PairwiseAlltoAllPlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  const uint64_t c = desc.count;
  Plan plan = NewPlan(n == 1 ? "local" : "pairwise", desc, geo);
  Emit(plan.addQueue(0), StepOp::Copy, -1, -1, Ref(kSendBuf, r * c), Ref(kRecvBuf, r * c), c);
  for (int i = 1; i < n; ++i) {
    // Staggered partners: at any moment rank r mostly talks to r+i and r-i, spreading the load.
    const int to = Mod(r + i, n), from = Mod(r - i, n);
    Emit(plan.addQueue(0), StepOp::Send, -1, to, Ref(kSendBuf, to * c), {}, c);
    Emit(plan.addQueue(0), StepOp::Recv, from, -1, {}, Ref(kRecvBuf, from * c), c);
  }
  return plan;
}

}  // namespace strata
