// Hierarchical two-level plans, composed from ring and tree pieces over subgroups: the ranks of one
// host, and the ranks with the same local index on every host. They need at least two hosts with the
// same number (two or more) of ranks each; other shapes run the flat plan (ring, or chain for
// broadcast and reduce), which the plan's `algorithm` names.
//
// Each channel runs the whole composition on its own part of the data, phases one after the other
// in one queue, so a phase reads only what the same queue wrote before; a large allreduce, reduce-scatter or
// allgather runs in pieces on two queues instead, with explicit waits between them (HierPieces). Each phase is
// deadlock-free on its own (rings with bounded pieces, trees), and a phase waits only on ranks that have finished
// the phases before it.
#include <algorithm>
#include <numeric>

#include "algorithms/algorithms.h"
#include "algorithms/plan_builder.h"
#include "algorithms/ring_emit.h"
#include "algorithms/tree_emit.h"
#include "exec/host_reduce.h"

namespace strata {

namespace {

// hosts[g][j]: the global rank with local index j on host g (ascending ranks).
struct HostLayout {
  std::vector<std::vector<int>> hosts;
  int h = 0, i = 0;  // this rank's host and local index
  int nh() const { return static_cast<int>(hosts.size()); }
  int nl() const { return static_cast<int>(hosts[0].size()); }
};

bool UniformHosts(const PlanGeometry& geo, HostLayout* out) {
  if (static_cast<int>(geo.hostOf.size()) != geo.nranks) return false;
  int nh = 0;
  for (int r = 0; r < geo.nranks; ++r) {
    if (geo.hostOf[r] < 0) return false;
    nh = std::max(nh, geo.hostOf[r] + 1);
  }
  out->hosts.assign(nh, {});
  for (int r = 0; r < geo.nranks; ++r) {
    std::vector<int>& h = out->hosts[geo.hostOf[r]];
    if (r == geo.rank) {
      out->h = geo.hostOf[r];
      out->i = static_cast<int>(h.size());
    }
    h.push_back(r);
  }
  if (nh < 2) return false;
  for (const std::vector<int>& h : out->hosts)
    if (h.size() != out->hosts[0].size() || h.size() < 2) return false;
  return true;
}

void Part(uint64_t count, int i, int k, uint64_t* off, uint64_t* len) {
  *off = count * i / k;
  *len = count * (i + 1) / k - *off;
}

RingSpec LocalRing(RingKind kind, const HostLayout& hl, uint64_t chunk) {
  RingSpec s;
  s.kind = kind;
  s.n = hl.nl();
  s.me = hl.i;
  s.next = hl.hosts[hl.h][Mod(hl.i + 1, s.n)];
  s.prev = hl.hosts[hl.h][Mod(hl.i - 1, s.n)];
  s.chunk = chunk;
  return s;
}

RingSpec CrossRing(RingKind kind, const HostLayout& hl, uint64_t chunk) {
  RingSpec s;
  s.kind = kind;
  s.n = hl.nh();
  s.me = hl.h;
  s.next = hl.hosts[Mod(hl.h + 1, s.n)][hl.i];
  s.prev = hl.hosts[Mod(hl.h - 1, s.n)][hl.i];
  s.chunk = chunk;
  return s;
}

// Ring layout whose block j is [offs[j], offs[j] + len).
RingLayout BlocksAt(const std::vector<uint64_t>& offs, uint64_t len) {
  RingLayout l;
  l.n = static_cast<int>(offs.size());
  l.off = offs;
  l.len.assign(offs.size(), len);
  l.maxLen = len;
  return l;
}

uint64_t Same(int, uint64_t at) { return at; }

// The rooted tree of hierarchical broadcast and reduce: a chain of the ranks with the root's local
// index across hosts, and from each of them a chain through its host.
ParentTable HierTree(const HostLayout& hl, int nranks, int root) {
  ParentTable parents(nranks, -1);
  const int nh = hl.nh(), nl = hl.nl();
  int rh = 0, ri = 0;
  for (int g = 0; g < nh; ++g)
    for (int j = 0; j < nl; ++j)
      if (hl.hosts[g][j] == root) rh = g, ri = j;
  for (int k = 1; k < nh; ++k) parents[hl.hosts[Mod(rh + k, nh)][ri]] = hl.hosts[Mod(rh + k - 1, nh)][ri];
  for (int g = 0; g < nh; ++g)
    for (int k = 1; k < nl; ++k) parents[hl.hosts[g][Mod(ri + k, nl)]] = hl.hosts[g][Mod(ri + k - 1, nl)];
  return parents;
}

}  // namespace

// A large allreduce, reduce-scatter or allgather runs in pieces, each channel on two queues: one over the host's
// connections (the phases within the host, piece by piece), one over the connections between hosts (the exchange of
// every piece). A piece's exchange between hosts waits for its reduction within the host, its allgather within the
// host for that exchange, so the host's memory work on one piece hides behind the network's on another. (Run phase
// after phase in one queue, the reduce-scatter over 2 hosts x 2 ranks at 10 Gbit/s took 1.17-1.23x the flat ring's
// time from 16 MiB up, where the allreduce's pieces ran 1.36-1.48x faster than the ring; docs/PERFORMANCE.md,
// "Eighteenth session".)
// A piece is at least this many FIFOs' worth (4 MiB with the default 8 x 128 KiB), so that its rings'
// start and end cost little beside it.
constexpr uint64_t kHierPieceFifos = 4;
// At most this many pieces, which bounds a plan's steps (a piece of 4 MiB up to 256 MiB a channel). The first piece's
// phase within the host and the last one's exchange overlap nothing: capped at 8 pieces (32 MiB each at 256 MiB), the
// reduce-scatter over 2 hosts x 2 ranks at 10 Gbit/s took 186-187 ms at 256 MiB against 155-156 with 64, the allreduce
// 309-311 against 285-287 (docs/PERFORMANCE.md, "Eighteenth session").
constexpr int kHierMaxPieces = 64;

namespace {

// The queues one channel's pieces run on: queue `lq` of the plan within the host, `xq` between hosts (the same queue
// for a single piece, whose phases then simply follow each other).
struct PieceQueues {
  int pieces = 1;
  int lq = 0, xq = 0;
  // Emits one phase of a piece on queue `q` of `plan` (emit(queue)), its first step waiting for queue `after` to
  // reach `afterSteps` when the two are different queues; returns the steps queue `q` holds after it.
  template <typename Fn>
  uint32_t phase(Plan& plan, int q, int after, uint32_t afterSteps, Fn emit) const {
    PlanQueue& queue = plan.queues[q];
    const size_t first = queue.steps.size();
    emit(queue);
    if (after != q && queue.steps.size() > first) {
      queue.steps[first].waitQueue = after;
      queue.steps[first].waitSteps = afterSteps;
    }
    return static_cast<uint32_t>(queue.steps.size());
  }
};

// Adds channel `c`'s queues for `bytes` of the whole vector: one piece per kHierPieceFifos FIFOs' worth, at most
// kHierMaxPieces.
PieceQueues HierPieces(Plan& plan, const PlanGeometry& geo, int c, uint64_t bytes) {
  PieceQueues pq;
  const uint64_t pieceBytes = kHierPieceFifos * geo.nslots * geo.slotBytes;
  pq.pieces = static_cast<int>(std::clamp<uint64_t>(bytes / pieceBytes, 1, kHierMaxPieces));
  pq.lq = static_cast<int>(plan.queues.size());
  plan.addQueue(c);
  pq.xq = pq.lq;
  if (pq.pieces > 1) {
    pq.xq = static_cast<int>(plan.queues.size());
    plan.addQueue(c);
  }
  return pq;
}

}  // namespace

Plan HierAllReducePlan(const CollDesc& desc, const PlanGeometry& geo) {
  HostLayout hl;
  if (!UniformHosts(geo, &hl)) return RingAllReducePlan(desc, geo);
  Plan plan = NewPlan("hier", desc, geo);
  const size_t esize = DataTypeSize(desc.dtype);
  const uint64_t chunk = RingChunkElems(geo, esize);
  const int nl = hl.nl(), nh = hl.nh();
  for (int c = 0; c < geo.nchannels; ++c) {
    uint64_t o, len;
    Part(desc.count, c, geo.nchannels, &o, &len);
    const PieceQueues pq = HierPieces(plan, geo, c, len * esize);
    const int pieces = pq.pieces;
    std::vector<RingLayout> layouts(pieces);
    std::vector<uint32_t> reduced(pieces), exchanged(pieces);
    // Within the host: each local index ends with the host's sum of its block of the piece.
    for (int p = 0; p < pieces; ++p) {
      uint64_t po, pl;
      Part(len, p, pieces, &po, &pl);
      layouts[p] = ChannelLayout(nl, (pl + nl - 1) / nl, pl, 0, 1, o + po);
      reduced[p] = pq.phase(plan, pq.lq, pq.lq, 0, [&](PlanQueue& q) {
        RingSpec rs = LocalRing(RingKind::ReduceScatter, hl, chunk);
        rs.divide = false;
        EmitRing(q, rs, layouts[p], Same, Same);
      });
    }
    // Across hosts: the ranks of one local index allreduce that block.
    for (int p = 0; p < pieces; ++p) {
      const RingLayout& l = layouts[p];
      exchanged[p] = pq.phase(plan, pq.xq, pq.lq, reduced[p], [&](PlanQueue& q) {
        RingSpec ar = CrossRing(RingKind::AllReduce, hl, chunk);
        ar.srcBuf = kRecvBuf;
        EmitRing(q, ar, ChannelLayout(nh, (l.len[hl.i] + nh - 1) / nh, l.len[hl.i], 0, 1, l.off[hl.i]), Same, Same);
      });
    }
    // Within the host again: everyone gathers every block.
    for (int p = 0; p < pieces; ++p)
      pq.phase(plan, pq.lq, pq.xq, exchanged[p], [&](PlanQueue& q) {
        RingSpec ag = LocalRing(RingKind::AllGather, hl, chunk);
        ag.srcBuf = kRecvBuf;
        EmitRing(q, ag, layouts[p], Same, Same);
      });
  }
  return plan;
}

Plan HierReduceScatterPlan(const CollDesc& desc, const PlanGeometry& geo) {
  HostLayout hl;
  if (!UniformHosts(geo, &hl)) return RingReduceScatterPlan(desc, geo);
  Plan plan = NewPlan("hier", desc, geo);
  plan.nBuffers = 3;
  plan.scratchElems = desc.count * geo.nranks;
  const size_t esize = DataTypeSize(desc.dtype);
  const uint64_t rc = desc.count, chunk = RingChunkElems(geo, esize);
  const int nl = hl.nl(), nh = hl.nh();
  for (int c = 0; c < geo.nchannels; ++c) {
    uint64_t co, cl;
    Part(rc, c, geo.nchannels, &co, &cl);
    const PieceQueues pq = HierPieces(plan, geo, c, cl * geo.nranks * esize);
    std::vector<uint32_t> reduced(pq.pieces);
    // Within the host, once per host g: local index j ends with the host's sum of the piece of the block of
    // host g's rank j (in scratch, at that block's place).
    for (int p = 0; p < pq.pieces; ++p) {
      uint64_t po, pl;
      Part(cl, p, pq.pieces, &po, &pl);
      reduced[p] = pq.phase(plan, pq.lq, pq.lq, 0, [&](PlanQueue& q) {
        for (int g = 0; g < nh; ++g) {
          std::vector<uint64_t> offs;
          for (int j = 0; j < nl; ++j) offs.push_back(hl.hosts[g][j] * rc + co + po);
          RingSpec rs = LocalRing(RingKind::ReduceScatter, hl, chunk);
          rs.dstBuf = kScratchBuf;
          rs.divide = false;
          EmitRing(q, rs, BlocksAt(offs, pl), Same, Same);
        }
      });
    }
    // Across hosts: the ranks of one local index reduce-scatter those pieces.
    for (int p = 0; p < pq.pieces; ++p) {
      uint64_t po, pl;
      Part(cl, p, pq.pieces, &po, &pl);
      pq.phase(plan, pq.xq, pq.lq, reduced[p], [&](PlanQueue& q) {
        std::vector<uint64_t> offs;
        for (int g = 0; g < nh; ++g) offs.push_back(hl.hosts[g][hl.i] * rc + co + po);
        RingSpec rs = CrossRing(RingKind::ReduceScatter, hl, chunk);
        rs.srcBuf = kScratchBuf;
        EmitRing(q, rs, BlocksAt(offs, pl), Same,
                 [&hl, rc](int b, uint64_t at) { return at - hl.hosts[b][hl.i] * rc; });
      });
    }
  }
  return plan;
}

Plan HierAllGatherPlan(const CollDesc& desc, const PlanGeometry& geo) {
  HostLayout hl;
  if (!UniformHosts(geo, &hl)) return RingAllGatherPlan(desc, geo);
  Plan plan = NewPlan("hier", desc, geo);
  const size_t esize = DataTypeSize(desc.dtype);
  const uint64_t sc = desc.count, chunk = RingChunkElems(geo, esize);
  const int nl = hl.nl(), nh = hl.nh();
  for (int c = 0; c < geo.nchannels; ++c) {
    uint64_t co, cl;
    Part(sc, c, geo.nchannels, &co, &cl);
    const PieceQueues pq = HierPieces(plan, geo, c, cl * geo.nranks * esize);
    Emit(plan.queues[pq.xq], StepOp::Copy, -1, -1, Ref(kSendBuf, co), Ref(kRecvBuf, geo.rank * sc + co), cl);
    // Across hosts: the ranks of one local index gather the pieces of their blocks.
    std::vector<uint32_t> gathered(pq.pieces);
    for (int p = 0; p < pq.pieces; ++p) {
      uint64_t po, pl;
      Part(cl, p, pq.pieces, &po, &pl);
      gathered[p] = pq.phase(plan, pq.xq, pq.xq, 0, [&](PlanQueue& q) {
        std::vector<uint64_t> offs;
        for (int g = 0; g < nh; ++g) offs.push_back(hl.hosts[g][hl.i] * sc + co + po);
        const uint64_t mine = offs[hl.h];
        EmitRing(
            q, CrossRing(RingKind::AllGather, hl, chunk), BlocksAt(offs, pl),
            [mine, co, po](int, uint64_t at) { return at - mine + co + po; }, Same);
      });
    }
    // Within the host, once per host g: the pieces of the blocks of host g's ranks.
    for (int p = 0; p < pq.pieces; ++p) {
      uint64_t po, pl;
      Part(cl, p, pq.pieces, &po, &pl);
      pq.phase(plan, pq.lq, pq.xq, gathered[p], [&](PlanQueue& q) {
        for (int g = 0; g < nh; ++g) {
          std::vector<uint64_t> loc;
          for (int j = 0; j < nl; ++j) loc.push_back(hl.hosts[g][j] * sc + co + po);
          RingSpec ag = LocalRing(RingKind::AllGather, hl, chunk);
          ag.srcBuf = kRecvBuf;
          EmitRing(q, ag, BlocksAt(loc, pl), Same, Same);
        }
      });
    }
  }
  return plan;
}

Plan HierBroadcastPlan(const CollDesc& desc, const PlanGeometry& geo) {
  HostLayout hl;
  if (!UniformHosts(geo, &hl)) return ChainBroadcastPlan(desc, geo);
  Plan plan = NewPlan("hier", desc, geo);
  const uint64_t chunk = RingChunkElems(geo, DataTypeSize(desc.dtype));
  const TreeNode node = NodeOf(HierTree(hl, geo.nranks, desc.root), geo.rank);
  const bool isRoot = geo.rank == desc.root;
  if (isRoot) Emit(plan.addQueue(0), StepOp::Copy, -1, -1, Ref(kSendBuf, 0), Ref(kRecvBuf, 0), desc.count);
  for (int c = 0; c < geo.nchannels; ++c) {
    uint64_t o, len;
    Part(desc.count, c, geo.nchannels, &o, &len);
    PlanQueue& q = plan.addQueue(c);
    for (uint64_t at = 0; at < len; at += chunk)
      EmitTreeDownChunk(q, node, Ref(isRoot ? kSendBuf : kRecvBuf, o + at), std::min(chunk, len - at));
  }
  return plan;
}

Plan HierReducePlan(const CollDesc& desc, const PlanGeometry& geo) {
  HostLayout hl;
  if (!UniformHosts(geo, &hl)) return ChainReducePlan(desc, geo);
  Plan plan = NewPlan("hier", desc, geo);
  plan.nBuffers = 3;
  const uint64_t chunk = RingChunkElems(geo, DataTypeSize(desc.dtype));
  plan.scratchElems = chunk * geo.nchannels;
  const TreeNode node = NodeOf(HierTree(hl, geo.nranks, desc.root), geo.rank);
  for (int c = 0; c < geo.nchannels; ++c) {
    uint64_t o, len;
    Part(desc.count, c, geo.nchannels, &o, &len);
    PlanQueue& q = plan.addQueue(c);
    for (uint64_t at = 0; at < len; at += chunk)
      EmitTreeUpChunk(q, node, Ref(kSendBuf, o + at), Ref(kScratchBuf, c * chunk), Ref(kRecvBuf, o + at),
                      std::min(chunk, len - at), true);
  }
  return plan;
}

// Small allreduce: a chain within each host reduces to its first rank (the leader), the leaders
// allreduce around a ring, and a chain within each host brings the result back.
Plan HierLeaderAllReducePlan(const CollDesc& desc, const PlanGeometry& geo) {
  HostLayout hl;
  if (!UniformHosts(geo, &hl)) return RingAllReducePlan(desc, geo);
  Plan plan = NewPlan("hier_leader", desc, geo);
  plan.nBuffers = 3;
  const uint64_t chunk = RingChunkElems(geo, DataTypeSize(desc.dtype));
  plan.scratchElems = chunk * geo.nchannels;
  const int nl = hl.nl(), nh = hl.nh();
  ParentTable chain(geo.nranks, -1);
  for (int g = 0; g < nh; ++g)
    for (int j = 1; j < nl; ++j) chain[hl.hosts[g][j]] = hl.hosts[g][j - 1];
  const TreeNode node = NodeOf(chain, geo.rank);
  for (int c = 0; c < geo.nchannels; ++c) {
    uint64_t o, len;
    Part(desc.count, c, geo.nchannels, &o, &len);
    PlanQueue& q = plan.addQueue(c);
    for (uint64_t at = 0; at < len; at += chunk)
      EmitTreeUpChunk(q, node, Ref(kSendBuf, o + at), Ref(kScratchBuf, c * chunk), Ref(kRecvBuf, o + at),
                      std::min(chunk, len - at), false);
    if (hl.i == 0) {
      RingSpec ar = CrossRing(RingKind::AllReduce, hl, chunk);
      ar.srcBuf = kRecvBuf;
      EmitRing(q, ar, ChannelLayout(nh, (len + nh - 1) / nh, len, 0, 1, o), Same, Same);
    }
    for (uint64_t at = 0; at < len; at += chunk)
      EmitTreeDownChunk(q, node, Ref(kRecvBuf, o + at), std::min(chunk, len - at));
  }
  return plan;
}

}  // namespace strata
