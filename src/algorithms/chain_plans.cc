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

// Whether the plan's ranks are on more than one host (PlanGeometry::hostOf, when known).
bool SpansHosts(const PlanGeometry& geo) {
  for (int h : geo.hostOf)
    if (h != geo.hostOf[0]) return true;
  return false;
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

// Across hosts, the broadcast's chain run backwards: from root-1 down the ring order to the root. With root 0 that is
// n-1, ..., 1, 0, neighbours in rank order only, which cross from host to host once per boundary where launchers
// number a host's ranks together; run from root+1 up to the root (1, 2, ..., n-1, 0), its last hop wraps from the last
// host to the first, one crossing more. Over 4 hosts x 1 rank at 10 Gbit/s on the 2-core development VM (ranks pinned
// two a core), that order put both middle ranks on one core and took 1.22-1.32x the tree's time at 256 MiB,
// and 1.25-1.39x this one's from 64 MiB. On one host the chain keeps that order: there, 4 ranks on the VM's 2 cores ran
// the backward chain 1.35-1.50x slower from 16 KiB to 512 KiB (its one hop between cores, where the forward chain has
// two, pipelines worse with two ranks a core; docs/PERFORMANCE.md, "Eighteenth session").
Plan ChainReducePlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("chain", desc, geo);
  const int step = SpansHosts(geo) ? -1 : 1;  // the direction the partial sums travel in rank order
  // 0 = root-1 (backwards) or root+1 starts, n-1 = the root ends it.
  const int pos = step < 0 ? n - 1 - Mod(r - desc.root, n) : Mod(r - desc.root - 1, n);
  const int next = Mod(r + step, n), prev = Mod(r - step, n);
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
