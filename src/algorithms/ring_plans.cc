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
#include "exec/host_reduce.h"

namespace strata {

uint64_t RingChunkElems(const PlanGeometry& geo, size_t elemSize) {
  uint64_t slots = std::max(1, geo.nslots / 2);
  return std::max<uint64_t>(1, slots * geo.slotBytes / elemSize);
}

namespace {

// Element range of block j's part for one channel, in "block space" (block j starts at j * blockStride).
struct RingLayout {
  int n = 1;
  std::vector<uint64_t> off, len;
  uint64_t maxLen = 0;
};

RingLayout ChannelLayout(int n, uint64_t blockStride, uint64_t total, int channel, int nchannels) {
  RingLayout l;
  l.n = n;
  l.off.resize(n);
  l.len.resize(n);
  for (int j = 0; j < n; ++j) {
    uint64_t begin = std::min<uint64_t>(total, j * blockStride);
    uint64_t end = std::min<uint64_t>(total, (j + 1) * blockStride);
    uint64_t blen = end - begin;
    uint64_t cb = blen * channel / nchannels, ce = blen * (channel + 1) / nchannels;
    l.off[j] = begin + cb;
    l.len[j] = ce - cb;
    l.maxLen = std::max(l.maxLen, l.len[j]);
  }
  return l;
}

enum class RingKind { AllReduce, ReduceScatter, AllGather };

// Offsets of block b's piece (block space offset `at`) in the send and receive buffers.
using OffsetFn = std::function<uint64_t(int block, uint64_t at)>;

void EmitRing(PlanQueue& q, RingKind kind, const PlanGeometry& geo, const RingLayout& l, uint64_t chunk,
              const OffsetFn& srcOff, const OffsetFn& dstOff) {
  const int n = geo.nranks, r = geo.rank;
  const int next = Mod(r + 1, n), prev = Mod(r - 1, n);
  const uint64_t rounds = (l.maxLen + chunk - 1) / chunk;
  for (uint64_t k = 0; k < rounds; ++k) {
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
      Emit(q, StepOp::Send, -1, next, Ref(kSendBuf, srcOff(b, at)), {}, cnt);
      for (int s = 1; s < n - 1; ++s) {
        b = Mod(r - 1 - s, n);
        piece(b, &at, &cnt);
        Emit(q, StepOp::RecvReduceSend, prev, next, Ref(kSendBuf, srcOff(b, at)), {}, cnt);
      }
      b = r;
      piece(b, &at, &cnt);
      if (kind == RingKind::ReduceScatter) {
        Emit(q, StepOp::RecvReduce, prev, -1, Ref(kSendBuf, srcOff(b, at)), Ref(kRecvBuf, dstOff(b, at)), cnt, true);
        continue;
      }
      Emit(q, StepOp::RecvReduceCopySend, prev, next, Ref(kSendBuf, srcOff(b, at)), Ref(kRecvBuf, dstOff(b, at)), cnt,
           true);
    } else {
      piece(r, &at, &cnt);
      Emit(q, StepOp::Send, -1, next, Ref(kSendBuf, srcOff(r, at)), {}, cnt);
    }
    // Allgather phase: block r-s arrives from prev and is passed on, until the block of next.
    for (int s = 1; s < n - 1; ++s) {
      int b = Mod(r - s, n);
      piece(b, &at, &cnt);
      Emit(q, StepOp::RecvCopySend, prev, next, {}, Ref(kRecvBuf, dstOff(b, at)), cnt);
    }
    int b = Mod(r + 1, n);
    piece(b, &at, &cnt);
    Emit(q, StepOp::Recv, prev, -1, {}, Ref(kRecvBuf, dstOff(b, at)), cnt);
  }
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
    EmitRing(plan.addQueue(c), RingKind::AllReduce, geo, l, chunk, same, same);
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
    EmitRing(plan.addQueue(c), RingKind::ReduceScatter, geo, l, chunk, src, dst);
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
    EmitRing(plan.addQueue(c), RingKind::AllGather, geo, l, chunk, src, dst);
  }
  return plan;
}

}  // namespace strata
