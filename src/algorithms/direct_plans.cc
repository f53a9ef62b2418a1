// Direct allreduce for small messages: every rank sends its whole buffer to every peer, then
// reduces the n contributions in rank order, so every rank computes bit-identical results. The
// whole buffer fits in one FIFO (PlanGeometry::directMaxBytes is capped at the FIFO capacity), so
// all sends complete without waiting for the receivers.
#include "algorithms/algorithms.h"
#include "algorithms/plan_builder.h"

namespace strata {

Plan DirectAllReducePlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("direct", desc, geo);
  plan.nBuffers = 3;
  plan.scratchElems = desc.count;
  const uint64_t cnt = desc.count;
  PlanQueue& q = plan.addQueue(0);
  for (int i = 1; i < n; ++i) Emit(q, StepOp::Send, -1, Mod(r + i, n), Ref(kSendBuf, 0), {}, cnt);
  // The accumulator lives in scratch so that an in-place call keeps its input until it is added.
  if (r == 0) Emit(q, StepOp::Copy, -1, -1, Ref(kSendBuf, 0), Ref(kScratchBuf, 0), cnt);
  else Emit(q, StepOp::Recv, 0, -1, {}, Ref(kScratchBuf, 0), cnt);
  for (int p = 1; p < n; ++p) {
    const bool last = p == n - 1;
    if (p == r) Emit(q, StepOp::LocalReduce, -1, -1, Ref(kSendBuf, 0), Ref(kScratchBuf, 0), cnt, last);
    else Emit(q, StepOp::RecvReduce, p, -1, Ref(kScratchBuf, 0), Ref(kScratchBuf, 0), cnt, last);
  }
  Emit(q, StepOp::Copy, -1, -1, Ref(kScratchBuf, 0), Ref(kRecvBuf, 0), cnt);
  return plan;
}

}  // namespace strata
