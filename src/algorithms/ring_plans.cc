// Pipelined ring algorithms (allreduce, reduce-scatter, allgather).
//
// The buffer is cut into one block per rank; each channel takes a contiguous part of every block and
// runs its own ring. A channel's ring proceeds in rounds, each moving one piece (at most
// RingChunkElems) of every block around the ring. Bounding the piece keeps a ring of FIFOs from
// deadlocking: the data in flight on the ring stays below the FIFOs' total capacity, so some rank
// can always both receive and send.
#include <algorithm>
#include <functional>

#include "algorithms/algorithms.h"
#include "algorithms/plan_builder.h"
#include "algorithms/ring_emit.h"
#include "exec/host_reduce.h"

namespace strata {

uint64_t RingChunkElems(const PlanGeometry& geo, size_t elemSize) {
  uint64_t slots = std::max(1, geo.nslots / 2);
  return std::max<uint64_t>(1, slots * geo.slotBytes / elemSize);
}

RingLayout ChannelLayout(int n, uint64_t blockStride, uint64_t total, int channel, int nchannels, uint64_t base) {
  RingLayout l;
  l.n = n;
  l.off.resize(n);
  l.len.resize(n);
  for (int j = 0; j < n; ++j) {
    uint64_t begin = std::min<uint64_t>(total, j * blockStride);
    uint64_t end = std::min<uint64_t>(total, (j + 1) * blockStride);
    uint64_t blen = end - begin;
    uint64_t cb = blen * channel / nchannels, ce = blen * (channel + 1) / nchannels;
    l.off[j] = base + begin + cb;
    l.len[j] = ce - cb;
    l.maxLen = std::max(l.maxLen, l.len[j]);
  }
  return l;
}

namespace {
// Appends round `round` to `q`. The last step of the previous round, when it only receives, waits in
// *held: it goes in after this round's first step when that one only sends, so the next round's first
// piece is on its way while the last one arrives (one round at a time left a slow link idle between
// rounds). Receives and sends each keep their order on every connection; a connection then holds at
// most two pieces, which the FIFO has room for (RingChunkElems).
void AppendRound(PlanQueue& q, PlanQueue& round, Step* held, bool* holding) {
  std::vector<Step>& steps = round.steps;
  size_t i = 0;
  if (*holding && !steps.empty() && steps[0].op == StepOp::Send) q.steps.push_back(steps[i++]);
  if (*holding) q.steps.push_back(*held);
  *holding = false;
  if (i == steps.size()) return;
  const Step& last = steps.back();
  const bool onlyReceives = last.op == StepOp::Recv || last.op == StepOp::RecvReduce;
  q.steps.insert(q.steps.end(), steps.begin() + static_cast<std::ptrdiff_t>(i), steps.end() - (onlyReceives ? 1 : 0));
  if (onlyReceives) *held = last, *holding = true;
}
}  // namespace

void EmitRing(PlanQueue& q, const RingSpec& spec, const RingLayout& l, const OffsetFn& srcOff, const OffsetFn& dstOff) {
  const int n = spec.n, r = spec.me, next = spec.next, prev = spec.prev;
  const RingKind kind = spec.kind;
  const uint16_t sb = spec.srcBuf, db = spec.dstBuf;
  const uint64_t chunk = spec.chunk;
  const uint64_t rounds = (l.maxLen + chunk - 1) / chunk;
  Step held;
  bool holding = false;
  PlanQueue round;
  for (uint64_t k = 0; k < rounds; ++k) {
    if (k > 0) AppendRound(q, round, &held, &holding);
    round.steps.clear();
    auto piece = [&](int b, uint64_t* at, uint64_t* cnt) {
      uint64_t start = k * chunk;
      *at = l.off[b] + start;
      *cnt = l.len[b] > start ? std::min(chunk, l.len[b] - start) : 0;
    };
    uint64_t at, cnt;
    if (kind != RingKind::AllGather) {
      // Reduce-scatter phase: block r-1-s travels forward, gathering each rank's contribution.
      int b = Mod(r - 1, n);
      piece(b, &at, &cnt);
      Emit(round, StepOp::Send, -1, next, Ref(sb, srcOff(b, at)), {}, cnt);
      for (int s = 1; s < n - 1; ++s) {
        b = Mod(r - 1 - s, n);
        piece(b, &at, &cnt);
        Emit(round, StepOp::RecvReduceSend, prev, next, Ref(sb, srcOff(b, at)), {}, cnt);
      }
      b = r;
      piece(b, &at, &cnt);
      if (kind == RingKind::ReduceScatter) {
        Emit(round, StepOp::RecvReduce, prev, -1, Ref(sb, srcOff(b, at)), Ref(db, dstOff(b, at)), cnt, spec.divide);
        continue;
      }
      Emit(round, StepOp::RecvReduceCopySend, prev, next, Ref(sb, srcOff(b, at)), Ref(db, dstOff(b, at)), cnt,
           spec.divide);
    } else {
      piece(r, &at, &cnt);
      Emit(round, StepOp::Send, -1, next, Ref(sb, srcOff(r, at)), {}, cnt);
    }
    // Allgather phase: block r-s arrives from prev and is passed on, until the block of next.
    for (int s = 1; s < n - 1; ++s) {
      int b = Mod(r - s, n);
      piece(b, &at, &cnt);
      Emit(round, StepOp::RecvCopySend, prev, next, {}, Ref(db, dstOff(b, at)), cnt);
    }
    int b = Mod(r + 1, n);
    piece(b, &at, &cnt);
    Emit(round, StepOp::Recv, prev, -1, {}, Ref(db, dstOff(b, at)), cnt);
  }
  if (rounds > 0) AppendRound(q, round, &held, &holding);
  if (holding) q.steps.push_back(held);
}

namespace {

RingSpec FlatRing(RingKind kind, const PlanGeometry& geo, uint64_t chunk) {
  RingSpec s;
  s.kind = kind;
  s.n = geo.nranks;
  s.me = geo.rank;
  s.next = Mod(geo.rank + 1, geo.nranks);
  s.prev = Mod(geo.rank - 1, geo.nranks);
  s.chunk = chunk;
  return s;
}

}  // namespace

Plan RingAllReducePlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("ring", desc, geo);
  const uint64_t chunk = RingChunkElems(geo, DataTypeSize(desc.dtype));
  const uint64_t stride = (desc.count + n - 1) / n;
  auto same = [](int, uint64_t at) { return at; };
  for (int c = 0; c < geo.nchannels; ++c) {
    RingLayout l = ChannelLayout(n, stride, desc.count, c, geo.nchannels);
    EmitRing(plan.addQueue(c), FlatRing(RingKind::AllReduce, geo, chunk), l, same, same);
  }
  return plan;
}

Plan RingReduceScatterPlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("ring", desc, geo);
  const uint64_t chunk = RingChunkElems(geo, DataTypeSize(desc.dtype));
  const uint64_t rc = desc.count;
  auto src = [](int, uint64_t at) { return at; };
  auto dst = [rc](int b, uint64_t at) { return at - b * rc; };
  for (int c = 0; c < geo.nchannels; ++c) {
    RingLayout l = ChannelLayout(n, rc, rc * n, c, geo.nchannels);
    EmitRing(plan.addQueue(c), FlatRing(RingKind::ReduceScatter, geo, chunk), l, src, dst);
  }
  return plan;
}

Plan RingAllGatherPlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("ring", desc, geo);
  const uint64_t chunk = RingChunkElems(geo, DataTypeSize(desc.dtype));
  const uint64_t sc = desc.count;
  // The rank's own block is copied locally, concurrently with the ring (a no-op when in place).
  Emit(plan.addQueue(0), StepOp::Copy, -1, -1, Ref(kSendBuf, 0), Ref(kRecvBuf, geo.rank * sc), sc);
  auto src = [sc](int b, uint64_t at) { return at - b * sc; };
  auto dst = [](int, uint64_t at) { return at; };
  for (int c = 0; c < geo.nchannels; ++c) {
    RingLayout l = ChannelLayout(n, sc, sc * n, c, geo.nchannels);
    EmitRing(plan.addQueue(c), FlatRing(RingKind::AllGather, geo, chunk), l, src, dst);
  }
  return plan;
}

}  // namespace strata
