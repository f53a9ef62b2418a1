// Recursive doubling (rd) and recursive halving-doubling (rhd, Rabenseifner) over the largest power
// of two q <= n ranks. The other n - q ranks fold first: even rank r < 2(n - q) hands its data to
// r + 1, which stands for both, and gets the result back at the end.
//
// Every exchange with a partner cuts its data in pieces of one slot and sends a FIFO's worth ahead
// of what it has received: both partners fill their FIFO before either receives, so neither waits on
// a full one, and a whole FIFO stays in flight over a slow link (one piece in flight at a time left
// a TCP link idle between pieces).
// Each channel runs the whole algorithm on its own part of the data.
//
// rd allreduce: log2(q) exchanges of the whole vector; each rank adds its partner's vector to its
// own. Partners compute a (op) b and b (op) a, which are the same bits for the commutative
// element-wise ops strata has, so every rank ends with bit-identical results.
// rhd allreduce: recursive halving (reduce-scatter, the farthest partner first) then recursive
// doubling (allgather) of the owned blocks. Reduce-scatter and allgather are its two halves.
#include <algorithm>

#include "algorithms/algorithms.h"
#include "algorithms/plan_builder.h"
#include "exec/host_reduce.h"

namespace strata {

namespace {

// The fold: which ranks stand in the power-of-two group and for whom.
struct Fold {
  int q = 1;         // ranks in the power-of-two group
  int extra = 0;     // n - q
  int v = -1;        // this rank's index in the group; -1 for a rank that folds away
  int partner = -1;  // the rank this one folds with (either side), -1 if none

  explicit Fold(int n, int r) {
    while (q * 2 <= n) q *= 2;
    extra = n - q;
    if (r < 2 * extra) {
      v = r % 2 ? r / 2 : -1;
      partner = r % 2 ? r - 1 : r + 1;
    } else {
      v = r - extra;
    }
  }
  int rankOf(int vi) const { return vi < extra ? 2 * vi + 1 : vi + extra; }
  // First real block of group index vi (blocks of one rank each; vi >= q gives n, the end of the last).
  int firstBlock(int vi) const { return vi >= q ? q + extra : vi < extra ? 2 * vi : vi + extra; }
};

void Part(uint64_t count, int i, int k, uint64_t* off, uint64_t* len) {
  *off = count * i / k;
  *len = count * (i + 1) / k - *off;
}

struct Seg {
  uint64_t off, len;
};

// How an exchange is cut: pieces of `elems` elements (one slot each), `lead` of them (a FIFO) in flight.
struct Pace {
  uint64_t elems = 1;
  size_t lead = 1;
};

Pace ExchangePace(const PlanGeometry& geo, size_t elemSize) {
  Pace p;
  p.elems = std::max<uint64_t>(1, geo.slotBytes / elemSize);
  p.lead = static_cast<size_t>(std::max(1, geo.nslots));
  return p;
}

// Sends `out` (from srcBuf) to `peer` while receiving `in` from it: Recv into dstBuf, or RecvReduce
// of srcBuf (op) incoming into dstBuf. Piece i + lead is sent once piece i has been received, so at most
// a FIFO's worth is ever waiting on either side; a piece is sent before anything reduced into its place.
void Exchange(PlanQueue& q, int peer, const std::vector<Seg>& out, const std::vector<Seg>& in, uint16_t srcBuf,
              uint16_t dstBuf, bool reduce, bool divide, Pace pace) {
  struct Piece {
    uint64_t off, len;
  };
  auto cut = [&pace](const std::vector<Seg>& segs) {
    std::vector<Piece> p;
    for (const Seg& s : segs)
      for (uint64_t at = 0; at < s.len; at += pace.elems)
        p.push_back({s.off + at, std::min(pace.elems, s.len - at)});
    return p;
  };
  const std::vector<Piece> sends = cut(out), recvs = cut(in);
  auto send = [&](size_t i) {
    if (i < sends.size()) Emit(q, StepOp::Send, -1, peer, Ref(srcBuf, sends[i].off), {}, sends[i].len);
  };
  for (size_t i = 0; i < pace.lead; ++i) send(i);
  for (size_t i = 0; i < std::max(sends.size(), recvs.size()); ++i) {
    if (i < recvs.size()) {
      const Piece& p = recvs[i];
      if (reduce) Emit(q, StepOp::RecvReduce, peer, -1, Ref(srcBuf, p.off), Ref(dstBuf, p.off), p.len, divide);
      else Emit(q, StepOp::Recv, peer, -1, {}, Ref(dstBuf, p.off), p.len);
    }
    send(i + pace.lead);
  }
}

void SendSegs(PlanQueue& q, int peer, const std::vector<Seg>& segs, uint16_t buf) {
  for (const Seg& s : segs) Emit(q, StepOp::Send, -1, peer, Ref(buf, s.off), {}, s.len);
}
void RecvSegs(PlanQueue& q, int peer, const std::vector<Seg>& segs, uint16_t srcBuf, uint16_t dstBuf, bool reduce) {
  for (const Seg& s : segs)
    Emit(q, reduce ? StepOp::RecvReduce : StepOp::Recv, peer, -1, reduce ? Ref(srcBuf, s.off) : BufRef{},
         Ref(dstBuf, s.off), s.len);
}

// Allreduce of [off, off + len) on one channel's queue.
void EmitAllReduce(PlanQueue& q, const Fold& f, uint64_t off, uint64_t len, bool halving, Pace pace) {
  const std::vector<Seg> all{{off, len}};
  if (f.v < 0) {
    SendSegs(q, f.partner, all, kSendBuf);
    RecvSegs(q, f.partner, all, 0, kRecvBuf, false);
    return;
  }
  uint16_t cur = kSendBuf;
  if (f.partner >= 0) {
    RecvSegs(q, f.partner, all, kSendBuf, kRecvBuf, true);
    cur = kRecvBuf;
  }
  if (!halving) {
    for (int m = 1; m < f.q; m *= 2) {
      Exchange(q, f.rankOf(f.v ^ m), all, all, cur, kRecvBuf, true, m * 2 >= f.q, pace);
      cur = kRecvBuf;
    }
  } else {
    auto range = [&](int lo, int hi) { return std::vector<Seg>{{off + len * lo / f.q, len * hi / f.q - len * lo / f.q}}; };
    int lo = 0, hi = f.q;
    for (int m = f.q / 2; m >= 1; m /= 2) {
      const int mid = (lo + hi) / 2;
      const bool upper = f.v & m;
      const int klo = upper ? mid : lo, khi = upper ? hi : mid;
      const int glo = upper ? lo : mid, ghi = upper ? mid : hi;
      Exchange(q, f.rankOf(f.v ^ m), range(glo, ghi), range(klo, khi), cur, kRecvBuf, true, m == 1, pace);
      cur = kRecvBuf;
      lo = klo;
      hi = khi;
    }
    for (int m = 1; m < f.q; m *= 2) {
      const int plo = lo ^ m;
      Exchange(q, f.rankOf(f.v ^ m), range(lo, lo + m), range(plo, plo + m), kRecvBuf, kRecvBuf, false, false, pace);
      lo = std::min(lo, plo);
    }
  }
  if (f.partner >= 0) SendSegs(q, f.partner, all, kRecvBuf);
}

// Channel c's part [co, co + cl) of each real block b (stride `block`) in [from, to).
std::vector<Seg> BlockSegs(int from, int to, uint64_t block, uint64_t co, uint64_t cl, int skip = -1) {
  std::vector<Seg> s;
  for (int b = from; b < to; ++b)
    if (b != skip) s.push_back({b * block + co, cl});
  return s;
}

}  // namespace

namespace {

// rd (`halving` false: whole vectors exchanged) or rhd (true: halves reduced, then gathered), per channel.
Plan ExchangeAllReducePlan(const char* name, bool halving, const CollDesc& desc, const PlanGeometry& geo) {
  if (geo.nranks == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan(name, desc, geo);
  const Fold f(geo.nranks, geo.rank);
  const Pace pace = ExchangePace(geo, DataTypeSize(desc.dtype));
  for (int c = 0; c < geo.nchannels; ++c) {
    uint64_t off, len;
    Part(desc.count, c, geo.nchannels, &off, &len);
    EmitAllReduce(plan.addQueue(c), f, off, len, halving, pace);
  }
  return plan;
}

}  // namespace

Plan RdAllReducePlan(const CollDesc& desc, const PlanGeometry& geo) {
  return ExchangeAllReducePlan("rd", false, desc, geo);
}

Plan RhdAllReducePlan(const CollDesc& desc, const PlanGeometry& geo) {
  return ExchangeAllReducePlan("rhd", true, desc, geo);
}

// Recursive halving over the group's blocks; group index v owns real blocks [firstBlock(v),
// firstBlock(v + 1)): its own and, when it stands for a folded rank, that rank's too. Partial sums
// live in scratch (the receive buffer holds one block only).
Plan RhdReduceScatterPlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("rhd", desc, geo);
  plan.nBuffers = 3;
  plan.scratchElems = desc.count * n;
  const Fold f(n, r);
  const uint64_t rc = desc.count;
  const Pace pace = ExchangePace(geo, DataTypeSize(desc.dtype));
  for (int c = 0; c < geo.nchannels; ++c) {
    uint64_t co, cl;
    Part(rc, c, geo.nchannels, &co, &cl);
    PlanQueue& q = plan.addQueue(c);
    if (f.v < 0) {
      SendSegs(q, f.partner, BlockSegs(0, n, rc, co, cl), kSendBuf);
      Emit(q, StepOp::Recv, f.partner, -1, {}, Ref(kRecvBuf, co), cl);
      continue;
    }
    uint16_t cur = kSendBuf;
    if (f.partner >= 0) {
      RecvSegs(q, f.partner, BlockSegs(0, n, rc, co, cl), kSendBuf, kScratchBuf, true);
      cur = kScratchBuf;
    }
    int lo = 0, hi = f.q;
    for (int m = f.q / 2; m >= 1; m /= 2) {
      const int mid = (lo + hi) / 2;
      const bool upper = f.v & m;
      const int klo = upper ? mid : lo, khi = upper ? hi : mid;
      const int glo = upper ? lo : mid, ghi = upper ? mid : hi;
      Exchange(q, f.rankOf(f.v ^ m), BlockSegs(f.firstBlock(glo), f.firstBlock(ghi), rc, co, cl),
               BlockSegs(f.firstBlock(klo), f.firstBlock(khi), rc, co, cl), cur, kScratchBuf, true, m == 1, pace);
      cur = kScratchBuf;
      lo = klo;
      hi = khi;
    }
    for (int b = f.firstBlock(f.v); b < f.firstBlock(f.v + 1); ++b) {
      if (b == r) Emit(q, StepOp::Copy, -1, -1, Ref(kScratchBuf, b * rc + co), Ref(kRecvBuf, co), cl);
      else Emit(q, StepOp::Send, -1, b, Ref(kScratchBuf, b * rc + co), {}, cl);
    }
  }
  return plan;
}

// Recursive doubling of the owned blocks: after the exchange at distance m a rank holds the blocks
// of 2m group members.
Plan RdAllGatherPlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("rd", desc, geo);
  const Fold f(n, r);
  const uint64_t sc = desc.count;
  const Pace pace = ExchangePace(geo, DataTypeSize(desc.dtype));
  for (int c = 0; c < geo.nchannels; ++c) {
    uint64_t co, cl;
    Part(sc, c, geo.nchannels, &co, &cl);
    PlanQueue& q = plan.addQueue(c);
    Emit(q, StepOp::Copy, -1, -1, Ref(kSendBuf, co), Ref(kRecvBuf, r * sc + co), cl);
    if (f.v < 0) {
      Emit(q, StepOp::Send, -1, f.partner, Ref(kSendBuf, co), {}, cl);
      RecvSegs(q, f.partner, BlockSegs(0, n, sc, co, cl, r), 0, kRecvBuf, false);
      continue;
    }
    if (f.partner >= 0) Emit(q, StepOp::Recv, f.partner, -1, {}, Ref(kRecvBuf, f.partner * sc + co), cl);
    int lo = f.v;
    for (int m = 1; m < f.q; m *= 2) {
      lo &= ~(m - 1);
      const int plo = lo ^ m;
      Exchange(q, f.rankOf(f.v ^ m), BlockSegs(f.firstBlock(lo), f.firstBlock(lo + m), sc, co, cl),
               BlockSegs(f.firstBlock(plo), f.firstBlock(plo + m), sc, co, cl), kRecvBuf, kRecvBuf, false, false, pace);
    }
    if (f.partner >= 0) SendSegs(q, f.partner, BlockSegs(0, n, sc, co, cl, f.partner), kRecvBuf);
  }
  return plan;
}

}  // namespace strata
