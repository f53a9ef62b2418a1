// Pipelined chains along the ring order for the rooted collectives. A chain has no cycle, so its
// steps may be any length: the executor pipelines them slot by slot.
#include "algorithms/algorithms.h"
#include "algorithms/plan_builder.h"

namespace strata {

namespace {
// Channel c's contiguous part of [0, count).
void ChannelPart(uint64_t count, int c, int nchannels, uint64_t* off, uint64_t* len) {
  *off = count * c / nchannels;
  *len = count * (c + 1) / nchannels - *off;
}
}  // namespace

Plan ChainBroadcastPlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("chain", desc, geo);
  const int pos = Mod(r - desc.root, n);  // 0 = root, n-1 = end of the chain
  const int next = Mod(r + 1, n), prev = Mod(r - 1, n);
  if (pos == 0) Emit(plan.addQueue(0), StepOp::Copy, -1, -1, Ref(kSendBuf, 0), Ref(kRecvBuf, 0), desc.count);
  for (int c = 0; c < geo.nchannels; ++c) {
    uint64_t off, len;
    ChannelPart(desc.count, c, geo.nchannels, &off, &len);
    PlanQueue& q = plan.addQueue(c);
    if (pos == 0) Emit(q, StepOp::Send, -1, next, Ref(kSendBuf, off), {}, len);
    else if (pos < n - 1) Emit(q, StepOp::RecvCopySend, prev, next, {}, Ref(kRecvBuf, off), len);
    else Emit(q, StepOp::Recv, prev, -1, {}, Ref(kRecvBuf, off), len);
  }
  return plan;
}

Plan ChainReducePlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("chain", desc, geo);
  const int pos = Mod(r - desc.root - 1, n);  // 0 = root+1 starts, n-1 = the root ends it
  const int next = Mod(r + 1, n), prev = Mod(r - 1, n);
  for (int c = 0; c < geo.nchannels; ++c) {
    uint64_t off, len;
    ChannelPart(desc.count, c, geo.nchannels, &off, &len);
    PlanQueue& q = plan.addQueue(c);
    if (pos == 0) Emit(q, StepOp::Send, -1, next, Ref(kSendBuf, off), {}, len);
    else if (pos < n - 1) Emit(q, StepOp::RecvReduceSend, prev, next, Ref(kSendBuf, off), {}, len);
    else Emit(q, StepOp::RecvReduce, prev, -1, Ref(kSendBuf, off), Ref(kRecvBuf, off), len, true);
  }
  return plan;
}

}  // namespace strata
