// Direct algorithms over peer-mapped windows, for ranks of one host over shared memory (PlanGeometry::
// windowBytes > 0). Every rank copies its input into its own window and raises its flag; once every
// peer's flag is up it reads the peers' windows in place:
// - one-shot: every rank reduces all windows (allreduce; its own block for reduce-scatter) or copies
//   every window (allgather);
// - two-shot allreduce: each rank reduces one part of all windows into the result area of its own
//   window and raises its flag again; then every rank copies its own part and each peer's as soon as
//   that peer's flag is up (the copies of the early peers' parts overlap the wait for the late ones).
// Reductions run in rank order, so every rank computes bit-identical results. Consecutive calls use
// the two halves of each window in turn: a rank rewrites a half only after every peer has signalled
// the following call, by which time they have finished reading it. So once this call's stage-1 flags are all up, the
// other half is free, and a small call claims the lines the next call will write there (StepOp::ClaimWindow), where
// the rank would otherwise wait: two-shot after raising its second flag, one-shot at its end.
// Where the ranks reach each other's memory by cross-memory attach (PlanGeometry::peerAccess), buffers from
// PeerAccessMinBytes (8 KiB on 2 ranks, 128-512 KiB on more by the collective, the rank count and whether ranks share
// cores), or larger than the window, go in place: every rank publishes its call's buffers with its first flag, then
// reads its part of the peers' inputs and writes what it computed into their outputs, a piece at a time so that the
// piece is still in cache when it goes out (the allreduce's one-shot would read every peer's whole buffer: it stays
// with the window). Its second flag says that it is done with the peers' buffers; once every peer has raised it, this
// rank's output is complete. Without cross-memory attach a buffer larger than the window runs the FIFO algorithms
// (direct or ring for allreduce, ring otherwise).
#include <algorithm>
#include <initializer_list>
#include <utility>

#include "algorithms/algorithms.h"
#include "algorithms/plan_builder.h"
#include "exec/host_reduce.h"

namespace strata {

namespace {

BufRef Win(int rank, uint64_t offset) { return Ref(static_cast<uint16_t>(kWindowBuf + rank), offset); }

bool FitsWindow(const PlanGeometry& geo, uint64_t elems, strataDataType_t dtype) {
  return geo.windowBytes > 0 && elems * DataTypeSize(dtype) <= geo.windowBytes;
}

// Raises this rank's flag to `stage` and waits for every peer's.
void SignalAndWait(PlanQueue& q, int n, int r, uint64_t stage) {
  Emit(q, StepOp::Signal, -1, -1, {}, Win(r, 0), stage);
  for (int i = 1; i < n; ++i) Emit(q, StepOp::WaitPeer, Mod(r + i, n), -1, {}, {}, stage);
}

// Claims the next call's lines of this rank's window that this call writes: `ranges` as (offset, count) in elements,
// when they come to kClaimWindowMaxBytes at most.
void ClaimWrites(PlanQueue& q, int r, strataDataType_t dtype,
                 std::initializer_list<std::pair<uint64_t, uint64_t>> ranges) {
  uint64_t elems = 0;
  for (const auto& range : ranges) elems += range.second;
  if (elems * DataTypeSize(dtype) > kClaimWindowMaxBytes) return;
  for (const auto& range : ranges) Emit(q, StepOp::ClaimWindow, -1, -1, {}, Win(r, range.first), range.second);
}

// dst = the reduction, in rank order, of `count` elements at `offset` of every rank's window.
void ReduceWindows(PlanQueue& q, int n, uint64_t offset, BufRef dst, uint64_t count) {
  Emit(q, StepOp::Copy, -1, -1, Win(0, offset), dst, count);
  for (int p = 1; p < n; ++p) Emit(q, StepOp::LocalReduce, -1, -1, Win(p, offset), dst, count, p == n - 1);
}

Plan FallbackPlan(const CollDesc& desc, const PlanGeometry& geo) {
  if (desc.kind == CollKind::AllReduce) {
    if (desc.count * DataTypeSize(desc.dtype) <= geo.slotBytes * geo.nslots) return DirectAllReducePlan(desc, geo);
    return RingAllReducePlan(desc, geo);
  }
  if (desc.kind == CollKind::ReduceScatter) return RingReduceScatterPlan(desc, geo);
  return RingAllGatherPlan(desc, geo);
}

// The elements of part `i` of `count` split into `n` parts: the first count % n get one more.
void PartOf(uint64_t count, int n, int i, uint64_t* offset, uint64_t* len) {
  const uint64_t base = count / n, extra = count % n;
  *offset = i * base + std::min<uint64_t>(i, extra);
  *len = base + (static_cast<uint64_t>(i) < extra ? 1 : 0);
}

// One PeerRead, PeerReduce or PeerWrite step with `peer` as the other rank and `theirs` its buffer.
void EmitPeer(PlanQueue& q, StepOp op, int peer, BufRef src, BufRef dst, BufRef theirs, uint64_t count,
              bool postDivide = false) {
  const bool write = op == StepOp::PeerWrite;
  const size_t before = q.steps.size();
  Emit(q, op, write ? -1 : peer, write ? peer : -1, src, dst, count, postDivide);
  if (q.steps.size() > before) q.steps.back().peer = theirs;
}

// dst[0, len) = src[0, len) reduced with every peer's buffer `buf` at `theirs`, in the order r+1, r+2, ...
void ReducePeers(PlanQueue& q, int n, int r, BufRef src, BufRef dst, BufRef theirs, uint64_t len) {
  for (int i = 1; i < n; ++i)
    EmitPeer(q, StepOp::PeerReduce, Mod(r + i, n), i == 1 ? src : dst, dst, theirs, len, i == n - 1);
}

void WritePeers(PlanQueue& q, int n, int r, BufRef src, BufRef theirs, uint64_t len) {
  for (int i = 1; i < n; ++i) EmitPeer(q, StepOp::PeerWrite, Mod(r + i, n), src, {}, theirs, len);
}

// The in-place plans of the header: allreduce (two-shot), reduce-scatter and allgather (one-shot).
Plan PeerAccessPlan(const char* name, const CollDesc& desc, const PlanGeometry& geo, uint64_t published) {
  const int n = geo.nranks, r = geo.rank;
  const uint64_t c = desc.count;
  Plan plan = NewPlan(name, desc, geo);
  if (c == 0) return plan;
  plan.peerElems = published;
  PlanQueue& q = plan.addQueue(0);
  SignalAndWait(q, n, r, 1);
  const uint64_t per = std::max<uint64_t>(1, kPeerPieceBytes / DataTypeSize(desc.dtype));
  uint64_t off = 0, len = c;
  if (desc.kind == CollKind::AllReduce) PartOf(c, n, r, &off, &len);
  if (desc.kind == CollKind::AllGather) Emit(q, StepOp::Copy, -1, -1, Ref(kSendBuf, 0), Ref(kRecvBuf, r * c), c);
  for (uint64_t i = 0; i < len; i += per) {
    const uint64_t m = std::min(per, len - i);
    switch (desc.kind) {
      case CollKind::AllReduce: {
        const BufRef at = Ref(kRecvBuf, off + i);
        ReducePeers(q, n, r, Ref(kSendBuf, off + i), at, Ref(kSendBuf, off + i), m);
        WritePeers(q, n, r, at, at, m);
        break;
      }
      case CollKind::ReduceScatter: {
        const BufRef mine = Ref(kSendBuf, r * c + i);
        ReducePeers(q, n, r, mine, Ref(kRecvBuf, i), mine, m);
        break;
      }
      default:  // allgather
        WritePeers(q, n, r, Ref(kSendBuf, i), Ref(kRecvBuf, r * c + i), m);
        break;
    }
  }
  SignalAndWait(q, n, r, 2);
  return plan;
}

}  // namespace

Plan OneShotPlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  const uint64_t c = desc.count;
  const uint64_t published = SendElems(desc, n);
  if (n == 1) return SingleRankPlan(desc, geo, c);
  // The allreduce's one-shot would read every peer's whole buffer in place: two-shot reads 1/n of each.
  const double esize = static_cast<double>(DataTypeSize(desc.dtype));
  const double whole = static_cast<double>(desc.kind == CollKind::AllReduce ? c : c * n) * esize;
  if (desc.kind != CollKind::AllReduce &&
      CopiesInPlaceAt(geo.peerAccess, geo.windowBytes, desc.kind, n, geo.oversubscribed, whole,
                      static_cast<double>(published) * esize))
    return PeerAccessPlan("oneshot", desc, geo, published);
  if (!FitsWindow(geo, published, desc.dtype)) return FallbackPlan(desc, geo);
  Plan plan = NewPlan("oneshot", desc, geo);
  if (c == 0) return plan;
  plan.windowElems = published;
  PlanQueue& q = plan.addQueue(0);
  Emit(q, StepOp::Copy, -1, -1, Ref(kSendBuf, 0), Win(r, 0), published);
  SignalAndWait(q, n, r, 1);
  switch (desc.kind) {
    case CollKind::AllReduce: ReduceWindows(q, n, 0, Ref(kRecvBuf, 0), c); break;
    case CollKind::ReduceScatter: ReduceWindows(q, n, r * c, Ref(kRecvBuf, 0), c); break;
    default:  // allgather
      for (int p = 0; p < n; ++p) Emit(q, StepOp::Copy, -1, -1, Win(p, 0), Ref(kRecvBuf, p * c), c);
      break;
  }
  ClaimWrites(q, r, desc.dtype, {{0, published}});
  return plan;
}

Plan TwoShotPlan(const CollDesc& desc, const PlanGeometry& geo) {
  // Reduce-scatter and allgather are one-shot's: each rank already reads only what it needs.
  if (desc.kind != CollKind::AllReduce) {
    Plan plan = OneShotPlan(desc, geo);
    if (plan.algorithm == "oneshot") plan.algorithm = "twoshot";
    return plan;
  }
  const int n = geo.nranks, r = geo.rank;
  const uint64_t c = desc.count;
  if (n == 1) return SingleRankPlan(desc, geo, c);
  const double bytes = static_cast<double>(c * DataTypeSize(desc.dtype));
  if (CopiesInPlaceAt(geo.peerAccess, geo.windowBytes, desc.kind, n, geo.oversubscribed, bytes, 2 * bytes))
    return PeerAccessPlan("twoshot", desc, geo, c);
  if (!FitsWindow(geo, 2 * c, desc.dtype)) return FallbackPlan(desc, geo);
  Plan plan = NewPlan("twoshot", desc, geo);
  if (c == 0) return plan;
  plan.windowElems = 2 * c;  // the inputs, then the reduced parts
  PlanQueue& q = plan.addQueue(0);
  Emit(q, StepOp::Copy, -1, -1, Ref(kSendBuf, 0), Win(r, 0), c);
  SignalAndWait(q, n, r, 1);
  uint64_t off = 0, len = 0;
  PartOf(c, n, r, &off, &len);
  ReduceWindows(q, n, off, Win(r, c + off), len);
  Emit(q, StepOp::Signal, -1, -1, {}, Win(r, 0), 2);
  ClaimWrites(q, r, desc.dtype, {{0, c}, {c + off, len}});
  for (int i = 0; i < n; ++i) {
    const int p = Mod(r + i, n);
    if (i > 0) Emit(q, StepOp::WaitPeer, p, -1, {}, {}, 2);
    PartOf(c, n, p, &off, &len);
    Emit(q, StepOp::Copy, -1, -1, Win(p, c + off), Ref(kRecvBuf, off), len);
  }
  return plan;
}

}  // namespace strata
