// Formulas of the cost model. n is the size of the whole vector in bytes, p ranks on h hosts with l
// ranks each. A message over a link of class c costs alpha_c + bytes / beta_c (over a link-bound network,
// max(alpha, bytes / beta + share x alpha): see Model::step); a reduction costs bytes / gamma. Ranks of a host are
// assumed contiguous (rank = host * l + local index), which is how launchers number them; flows from the l ranks of one
// host that cross hosts at the same time share that host's NIC.
#include "algorithms/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "algorithms/algorithms.h"

namespace strata {

namespace {

constexpr double kNotApplicable = -1.0;
// Over a link-bound network (CostInputs::interLinkBound) the part of a step's latency a message whose bytes outlast it
// still pays, on the steps where each rank exchanges with one partner across hosts (rd, rhd, and the rings among
// hosts of hier and hier_leader). The link's queue takes the message at once; the sender's and the receiver's
// overheads, which are most of a small call's latency, run while its bytes drain. Over 4 hosts x 1 rank at 1 Gbit/s
// (docs/PERFORMANCE.md, "Sixteenth session") rd took 29.6 us at 8 B but 69.6 at 4 KiB and 138.5 at 8 KiB, its two
// steps' bytes (65.5 and 131 us) and 2-4 us a step; rhd 106 us at 8 KiB against 98 of bytes. Costed alpha + bytes,
// rhd's twice as many steps lost it the 8 KiB class in launches whose calibration timed rd's small call at 38 us
// instead of 29, where rd ran 1.31x slower.
constexpr double kLinkBoundLatencyShare = 0.25;

// One process_vm_readv or process_vm_writev of a piece, beside its bytes: on 2 ranks twoshot in place took 2.1-2.4 us
// up to 8 KiB, with two calls and two flags.
constexpr double kCrossMemoryCallUs = 0.6;

// Out of cache the in-place allreduce moves, per rank, its part of every input (n) and its part of every output (n),
// each output line read for ownership before the system call writes it (n): up to 3n of memory traffic where the
// ring's fused pass with streaming stores moves 2n. Its time over the ring's on the development VM, through
// all_reduce_perf's buffers (the same ones call after call): 2 ranks 0.55-0.60 at 1 MiB (the calibration's size),
// 0.75-0.83 from 2 to 16 MiB, 1.25 at 32 MiB, 1.33 at 64 MiB; 4 ranks 0.57 at 1 MiB, 0.82 at 4 MiB, 1.48 at 16 MiB.
// Through selector_perf's moving buffers: 2 ranks 0.73-0.88 at 8 MiB, 0.94-1.09 from 16 MiB; 4 ranks 1.02-1.07 at
// 16 MiB, 0.96-1.01 from 64 MiB (docs/PERFORMANCE.md, "Twentieth session"). From kOutOfCachePeerBytes on the model
// takes the 2-rank 64 MiB figure, 1.3, moving with log2 of the size in between: for a measured 0.6, 0.86 at 8 MiB,
// 0.95 at 16 and 1.04 at 32. (With 1.5, the bound of the traffic, 0.93-1.04 at 8 MiB for the scales the calibration
// measured, and the ring ran 8 MiB on 2 ranks, 1.21x slower than twoshot in selector_perf.)
constexpr double kOutOfCachePeerScale = 1.3;
constexpr double kOutOfCachePeerBytes = 256.0 * (1 << 20);

// Microseconds to move `bytes` at `gbs` GB/s.
double Us(double bytes, double gbs) { return gbs > 0 ? bytes / (gbs * 1e3) : 0.0; }

int FloorPow2(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

// What one algorithm step sees: a latency and the bandwidth of each flow.
struct Hop {
  double latUs;
  double gbs;
  bool linkBound = false;  // across hosts over a link-bound network: see Model::step
};

class Model {
 public:
  explicit Model(const CostInputs& in)
      : in_(in),
        p_(std::max(1, in.nranks)),
        h_(std::max(1, in.nhosts)),
        l_(in.ranksPerHost > 0 ? in.ranksPerHost : (p_ + h_ - 1) / h_) {}

  bool multiHost() const { return h_ > 1; }
  bool uniform() const { return in_.ranksPerHost > 0 && in_.ranksPerHost * h_ == p_; }

  // A hop between neighbours of a flat algorithm: across hosts when there are several, with one flow
  // per host direction at a time (rings and chains enter and leave each host once). Never link-bound (Model::step):
  // over 4 hosts at 1 Gbit/s the flat ring's steps at 8 KiB took 33 us each, its bytes (16.4 us) and its whole
  // latency, where rd's and rhd's exchanges paid a quarter of theirs.
  Hop flat() const {
    if (!multiHost()) return {in_.intra.latencyUs, in_.intra.bandwidthGBs};
    return {std::max(in_.inter.latencyUs, in_.intra.latencyUs), std::min(in_.inter.bandwidthGBs, in_.intra.bandwidthGBs)};
  }
  // A hop at rank distance `dist` where every rank sends at once (recursive doubling and halving):
  // with contiguous hosts, distances of l or more cross hosts, all l flows of a host together.
  Hop atDistance(int dist) const {
    if (!multiHost() || dist < l_) return {in_.intra.latencyUs, in_.intra.bandwidthGBs};
    return {in_.inter.latencyUs, in_.inter.bandwidthGBs / l_, in_.interLinkBound};
  }
  Hop intra() const { return {in_.intra.latencyUs, in_.intra.bandwidthGBs}; }
  Hop inter(int flows) const {
    return {in_.inter.latencyUs, in_.inter.bandwidthGBs / std::max(1, flows), in_.interLinkBound};
  }

  // One message of `bytes` over `hop`: its latency and its bytes, or over a link-bound network whichever is longer of
  // the latency and the bytes with kLinkBoundLatencyShare of the latency (0 bytes cost the latency either way).
  static double step(const Hop& hop, double bytes) {
    const double wire = Us(bytes, hop.gbs);
    if (!hop.linkBound) return hop.latUs + wire;
    return std::max(hop.latUs, wire + kLinkBoundLatencyShare * hop.latUs);
  }

  double reduce(double bytes) const { return Us(bytes, in_.reduceGBs); }
  double copy(double bytes) const { return Us(bytes, in_.copyGBs); }
  double piece(double bytes) const { return std::min<double>(bytes, static_cast<double>(in_.pipelineBytes)); }

  // Ring over `n` ranks moving `steps` blocks of `block` bytes per rank, `reduces` of them reduced.
  double ring(int steps, double block, int reduces, Hop hop) const {
    return steps * step(hop, block) + reduces * reduce(block);
  }
  // Pipelined chain of `n` ranks carrying `bytes`.
  double chain(int n, double bytes, bool reduces, Hop hop) const {
    if (n <= 1) return 0;
    const double c = piece(bytes);
    return (n - 1) * hop.latUs + (n - 2) * Us(c, hop.gbs) + Us(bytes, hop.gbs) + (reduces ? reduce(bytes) : 0);
  }

  double ringCost(CollKind kind, double n) const {
    const double block = n / p_;
    switch (kind) {
      case CollKind::AllReduce: return ring(2 * (p_ - 1), block, p_ - 1, flat());
      case CollKind::ReduceScatter: return ring(p_ - 1, block, p_ - 1, flat());
      case CollKind::AllGather: return ring(p_ - 1, block, 0, flat());
      default: return kNotApplicable;
    }
  }

  double chainCost(CollKind kind, double n) const {
    if (kind != CollKind::Broadcast && kind != CollKind::Reduce) return kNotApplicable;
    return chain(p_, n, kind == CollKind::Reduce, flat());
  }

  double directCost(CollKind kind, double n) const {
    if (kind != CollKind::AllReduce || n > static_cast<double>(in_.fifoBytes)) return kNotApplicable;
    // Every rank sends its whole buffer to every peer and reduces all of them into a scratch accumulator, which
    // rank 0 starts with a copy of its input and every rank copies into its output at the end: two local copies
    // that rd does not make (without them, direct tied rd on 2 ranks at 16-32 KiB and ran 1.14-1.5x slower).
    double wire = Us((l_ - 1) * n, in_.intra.bandwidthGBs);
    double lat = in_.intra.latencyUs;
    if (multiHost()) {
      wire = std::max(wire, Us(static_cast<double>(l_) * (p_ - l_) * n, in_.inter.bandwidthGBs));
      lat = std::max(lat, in_.inter.latencyUs);
    }
    return lat + wire + reduce((p_ - 1) * n) + 2 * copy(n);
  }

  // Double binary tree: every rank is inner in one tree and a leaf in the other; each tree carries
  // half of the data, pipelined in pieces. Where no pair of trees exists one tree carries it all, and the tree's
  // depth and its busiest rank's children are the plans' own (TreeShapeOf): a rooted collective on 4 ranks is a line
  // of 4, the chain's shape, and an allreduce on 4 ranks has a rank that takes the whole vector from each of two
  // children. (Costed as depth log2 p with half the vector per tree, the line came out well under the chain, 61 us
  // against 106 at 64 KiB, and the selector ran the tree for every reduce on 4 ranks, where the chain ran 1.14-1.63x
  // faster back to back from 8 KiB to 1 MiB; docs/PERFORMANCE.md, "Seventeenth session".)
  double treeCost(CollKind kind, double n) const {
    if (kind != CollKind::AllReduce && kind != CollKind::Broadcast && kind != CollKind::Reduce) return kNotApplicable;
    if (p_ == 1) return copy(n);
    const bool rooted = kind != CollKind::AllReduce;
    const TreeShape shape = TreeShapeOf(p_, rooted);
    const int d = shape.depth;
    Hop hop = flat();
    if (multiHost() && l_ > 1) hop.gbs = std::min(hop.gbs, in_.inter.bandwidthGBs / 2);
    const double share = n / shape.ntrees;                          // what each tree carries
    const double busiest = shape.maxChildren * share;               // what its busiest rank takes in (or sends out)
    const double oneWay = d * hop.latUs + (d - 1) * Us(piece(share), hop.gbs) + Us(busiest, hop.gbs);
    switch (kind) {
      case CollKind::AllReduce:
        return 2 * oneWay + reduce(busiest);
      case CollKind::Reduce:
        return oneWay + reduce(busiest);
      default: return oneWay;
    }
  }

  // Recursive doubling: log2(q) exchanges of the whole buffer (allreduce) or of a doubling part
  // (allgather); p - q extra ranks fold into partners before and get the result after.
  double rdCost(CollKind kind, double n) const {
    const int q = FloorPow2(p_);
    const bool fold = q != p_;
    double t = 0;
    switch (kind) {
      case CollKind::AllReduce:
        for (int dist = 1; dist < q; dist *= 2) {
          const Hop hop = atDistance(dist);
          t += step(hop, n) + reduce(n);
        }
        if (fold) t += 2 * step(flat(), n) + reduce(n);
        return t;
      case CollKind::AllGather:
        for (int dist = 1; dist < q; dist *= 2) {
          const Hop hop = atDistance(dist);
          t += step(hop, n * dist / p_);
        }
        if (fold) t += step(flat(), n / p_) + step(flat(), n);
        return t;
      case CollKind::ReduceScatter: return rhdCost(kind, n);
      default: return kNotApplicable;
    }
  }

  // Recursive halving (reduce-scatter) then doubling (allgather), Rabenseifner: the first halving step
  // is the farthest partner and carries half the buffer.
  double rhdCost(CollKind kind, double n) const {
    const int q = FloorPow2(p_);
    const bool fold = q != p_;
    double halving = 0, doubling = 0;
    double part = n / 2;
    for (int dist = q / 2; dist >= 1; dist /= 2, part /= 2) {
      const Hop hop = atDistance(dist);
      halving += step(hop, part) + reduce(part);
      doubling += step(hop, part);
    }
    const double foldCost = fold ? step(flat(), n) : 0;
    switch (kind) {
      case CollKind::AllReduce: return halving + doubling + 2 * foldCost + (fold ? reduce(n) : 0);
      case CollKind::ReduceScatter: return halving + foldCost + (fold ? reduce(n) : 0);
      case CollKind::AllGather: return doubling + foldCost;
      default: return kNotApplicable;
    }
  }

  // Direct algorithms over peer-mapped memory, one host only: one-shot reads every peer's whole buffer,
  // two-shot reduces one part per rank then gathers the parts.
  // Every rank copies its buffer into its window, then reads what it needs of its peers' windows. Those reads
  // cross cores as a FIFO's do, at the link's rate, not at the local copy rate (costed that way, oneshot looked
  // cheaper than rd at 2-8 KiB on 2 ranks and ran 1.16-1.30x slower).
  // A rank's window holds what it publishes: its input (an allgather's is 1/p of the vector, the others' all of it).
  // Its one flag raised and its peers' seen cost one hop's latency, as an exchange of rd's: back to back on 2 ranks
  // the allgather's oneshot took 0.3 us to rd's 0.4 up to 1 KiB (docs/PERFORMANCE.md, "Seventeenth session"). (Costed
  // as two, rd took those sizes.) twoshot raises its flag twice.
  double oneshotCost(CollKind kind, double n) const {
    const double published = kind == CollKind::AllGather ? n / p_ : n;
    if (multiHost() || !in_.peerMapped) return kNotApplicable;
    const double lat = in_.intra.latencyUs;
    const double gbs = in_.intra.bandwidthGBs;
    if (CopiesInPlace(in_, "oneshot", kind, n)) {
      // Its block of every peer's input read and reduced (reduce-scatter), or its input written into every peer's
      // output (allgather), in pieces, each a system call; measured (peerScale), the ring's bytes scaled.
      const double across = (p_ - 1) * n / p_;
      const double fixed = 2 * lat + (p_ - 1) * pieces(n / p_) * kCrossMemoryCallUs;
      if (in_.peerScale > 0) return fixed + PeerScaleAt(in_, kind, n) * (ringCost(kind, n) - ringCost(kind, 0));
      if (kind == CollKind::ReduceScatter) return fixed + Us(across, gbs) + reduce(across);
      return fixed + copy(n / p_) + Us(across, gbs);
    }
    if (published > static_cast<double>(in_.windowBytes)) return kNotApplicable;
    switch (kind) {
      case CollKind::AllReduce: return lat + copy(n) + Us((p_ - 1) * n, gbs) + reduce((p_ - 1) * n);
      case CollKind::ReduceScatter: return lat + copy(n) + Us((p_ - 1) * n / p_, gbs) + reduce((p_ - 1) * n / p_);
      case CollKind::AllGather: return lat + copy(n / p_) + Us((p_ - 1) * n / p_, gbs);
      default: return kNotApplicable;
    }
  }
  // An allgather or reduce-scatter forced to twoshot runs oneshot's plan: not a second candidate beside oneshot (timed
  // against it at 8 KiB on 4 ranks, the same plan came out 13.3 us and 13.6 and took a rival's place in the timing).
  double twoshotCost(CollKind kind, double n) const {
    if (multiHost() || !in_.peerMapped || kind != CollKind::AllReduce) return kNotApplicable;
    // Its part of every peer's window read across cores and reduced, then every peer's reduced part read back: both
    // at the link's rate, as oneshot's reads (costed at the copy rate, twoshot looked cheaper than rd at 8 KiB on
    // 2 ranks and ran 1.29-1.46x slower). In place (cross-memory attach) it reads its part of the peers' inputs and
    // writes the result into their outputs, without the copy into the window, a system call per piece and peer.
    const double part = (p_ - 1) * n / p_;
    const double moves = Us(part, in_.intra.bandwidthGBs) + reduce(part) + Us(part, in_.intra.bandwidthGBs);
    if (CopiesInPlace(in_, "twoshot", kind, n)) {
      const double fixed = 2 * in_.intra.latencyUs + 2 * (p_ - 1) * pieces(n / p_) * kCrossMemoryCallUs;
      if (in_.peerScale > 0) return fixed + PeerScaleAt(in_, kind, n) * (ringCost(kind, n) - ringCost(kind, 0));
      return fixed + moves;
    }
    if (2 * n > static_cast<double>(in_.windowBytes)) return kNotApplicable;
    return 2 * in_.intra.latencyUs + copy(n) + moves;
  }
  // The pieces a rank's part of `part` bytes goes in (kPeerPieceBytes), at least one.
  static double pieces(double part) { return std::max(1.0, std::ceil(part / kPeerPieceBytes)); }

  // Two levels: within each host, then between hosts among ranks of the same local index (l flows per
  // NIC at once, each carrying 1/l of the data), then within each host again.
  double hierCost(CollKind kind, double n) const {
    if (!multiHost() || !uniform() || l_ < 2) return kNotApplicable;
    const double local = n / l_;
    switch (kind) {
      case CollKind::AllReduce:
        return ring(l_ - 1, local, l_ - 1, intra()) + ring(2 * (h_ - 1), local / h_, h_ - 1, inter(l_)) +
               ring(l_ - 1, local, 0, intra());
      case CollKind::ReduceScatter:
        return ring(l_ - 1, local, l_ - 1, intra()) + ring(h_ - 1, local / h_, h_ - 1, inter(l_));
      case CollKind::AllGather:
        return ring(h_ - 1, local / h_, 0, inter(l_)) + ring(l_ - 1, local, 0, intra());
      case CollKind::Broadcast:
      case CollKind::Reduce: {
        // Chains between host leaders and within hosts, pipelined into each other.
        const bool red = kind == CollKind::Reduce;
        const Hop x = inter(1), i = intra();
        return (h_ - 1) * x.latUs + (l_ - 1) * i.latUs + std::max(Us(n, x.gbs), Us(n, i.gbs)) +
               Us(piece(n), i.gbs) + (red ? reduce(n) : 0);
      }
      default: return kNotApplicable;
    }
  }

  // Reduce to one leader per host, allreduce among leaders, broadcast within hosts: few messages, for
  // small sizes.
  double hierLeaderCost(CollKind kind, double n) const {
    if (kind != CollKind::AllReduce || !multiHost() || !uniform() || l_ < 2) return kNotApplicable;
    return chain(l_, n, true, intra()) + ring(2 * (h_ - 1), n / h_, h_ - 1, inter(1)) + chain(l_, n, false, intra());
  }

  // Pairwise exchange: p-1 rounds of one block each; blocks to other hosts share the NIC.
  double pairwiseCost(CollKind kind, double n) const {
    if (kind != CollKind::AlltoAll) return kNotApplicable;
    const double blk = n / p_;
    double wire = Us((std::min(l_, p_) - 1) * blk, in_.intra.bandwidthGBs);
    double lat = in_.intra.latencyUs;
    if (multiHost()) {
      wire = std::max(wire, Us(static_cast<double>(l_) * (p_ - l_) * blk, in_.inter.bandwidthGBs));
      lat = std::max(lat, in_.inter.latencyUs);
    }
    return (p_ - 1) * lat + wire;
  }

 private:
  const CostInputs& in_;
  int p_, h_, l_;
};

// Where CostInputs::recursiveScaleLarge starts to hold.
uint64_t LargeScaleFromBytes(const CostInputs& in) {
  return in.recursiveScaleLargeBytes > 0 ? in.recursiveScaleLargeBytes : 8 * in.recursiveScaleBytes;
}

}  // namespace

std::string DescribeSmallUs(const CostInputs& in) {
  std::string out;
  char buf[64];
  for (const auto& e : in.smallUs) {
    snprintf(buf, sizeof buf, "%s%s %.1f us", out.empty() ? "" : ", ", e.first.c_str(), e.second);
    out += buf;
  }
  return out.empty() ? "not measured" : out;
}

std::string DescribeCostInputs(const CostInputs& in) {
  // The per-byte scale: one figure, or one per measured size and the out-of-cache one.
  auto size = [](uint64_t b) { return std::to_string(static_cast<unsigned long long>(b)) + " B"; };
  char scale[192];
  if (in.recursiveScaleBytes == 0) {
    snprintf(scale, sizeof scale, "%.2f", in.recursiveScale);
  } else {
    char small[64] = "";
    if (in.recursiveScaleSmallBytes > 0)
      snprintf(small, sizeof small, "%.2f at %s, ", in.recursiveScaleSmall, size(in.recursiveScaleSmallBytes).c_str());
    snprintf(scale, sizeof scale, "%s%.2f at %s, %.2f from %s", small, in.recursiveScale,
             size(in.recursiveScaleBytes).c_str(), in.recursiveScaleLarge, size(LargeScaleFromBytes(in)).c_str());
  }
  if (in.nranks >= 3 && in.rdScaleFactor != 1.0) {
    const size_t used = strlen(scale);
    snprintf(scale + used, sizeof scale - used, " (rd's %.2f times that)", in.rdScaleFactor);
  }
  char buf[768];
  snprintf(buf, sizeof buf,
           "%d rank(s) on %d host(s)%s%s; within a host %.2f us, %.2f GB/s; between hosts %.2f us, %.2f GB/s%s; "
           "reduce %.2f GB/s, copy %.2f GB/s; %s per-byte scale %s; small allreduce ",
           in.nranks, in.nhosts, in.ranksPerHost ? (", " + std::to_string(in.ranksPerHost) + " per host").c_str() : "",
           in.oversubscribed ? (" (more ranks than cores, " + std::to_string(in.ranksPerCpu) + " a CPU)").c_str() : "",
           in.intra.latencyUs, in.intra.bandwidthGBs,
           in.inter.latencyUs, in.inter.bandwidthGBs, in.interLinkBound ? " (link-bound)" : "", in.reduceGBs,
           in.copyGBs, in.nranks == 2 ? "rd" : "rd/rhd", scale);
  std::string out = buf + DescribeSmallUs(in);
  // Cross-memory attach: whether the ranks copy in place, and at what scale of the ring's per-byte cost.
  if (in.peerAccess && in.peerScale > 0) {
    snprintf(buf, sizeof buf,
             "; in place (cross-memory attach) %.2f x the ring's per-byte cost (the allreduce's at %s, %.2f from %s; "
             "the reduce-scatter's at least 1)",
             in.peerScale, size(in.peerScaleBytes).c_str(), std::max(in.peerScale, kOutOfCachePeerScale),
             size(static_cast<uint64_t>(kOutOfCachePeerBytes)).c_str());
    out += buf;
  } else if (in.peerAccess) {
    out += "; in place (cross-memory attach), not measured";
  }
  return out;
}

double PeerScaleAt(const CostInputs& in, CollKind kind, double bytes) {
  if (!(in.peerScale > 0)) return 1.0;
  // The allgather in place writes each rank's input straight into its peers' outputs, where the ring copies it into a
  // FIFO slot and out again: one pass fewer in cache and out, 0.59-0.96x the ring's time on 2 and 4 ranks from
  // 256 KiB to 256 MiB. The reduce-scatter in place reads and reduces what the ring's slots carry, the same passes:
  // 0.90-1.15x the ring's time on 2 ranks from 512 KiB, 0.81-1.17x on 4 from 2 MiB (the ring's ties).
  // (docs/PERFORMANCE.md, "Twentieth session".)
  if (kind == CollKind::AllGather) return in.peerScale;
  if (kind == CollKind::ReduceScatter) return std::max(1.0, in.peerScale);
  const double from = std::max(1.0, static_cast<double>(in.peerScaleBytes));
  const double large = std::max(in.peerScale, kOutOfCachePeerScale);
  if (bytes <= from) return in.peerScale;
  if (bytes >= kOutOfCachePeerBytes) return large;
  const double f = std::log2(bytes / from) / std::log2(kOutOfCachePeerBytes / from);
  return in.peerScale + f * (large - in.peerScale);
}

bool CopiesInPlace(const CostInputs& in, const std::string& algorithm, CollKind kind, double bytes) {
  if (!in.peerMapped || in.nhosts > 1) return false;
  const bool served = kind == CollKind::AllReduce
                          ? algorithm == "twoshot"
                          : algorithm == "oneshot" && (kind == CollKind::AllGather || kind == CollKind::ReduceScatter);
  const double published = kind == CollKind::AllReduce   ? 2 * bytes
                           : kind == CollKind::AllGather ? bytes / in.nranks
                                                         : bytes;
  return served && CopiesInPlaceAt(in.peerAccess, in.windowBytes, kind, in.nranks, in.oversubscribed, bytes, published);
}

double RecursiveScaleAt(const CostInputs& in, double bytes) {
  const double at = static_cast<double>(in.recursiveScaleBytes);
  const double small = static_cast<double>(in.recursiveScaleSmallBytes);
  if (small > 0 && at > small && bytes < at) {
    if (bytes <= small) return in.recursiveScaleSmall;
    const double f = std::log2(bytes / small) / std::log2(at / small);  // 0 at the small size, 1 at `at`
    return in.recursiveScaleSmall + f * (in.recursiveScale - in.recursiveScaleSmall);
  }
  if (at <= 0 || bytes <= at) return in.recursiveScale;
  const double from = static_cast<double>(LargeScaleFromBytes(in));
  const double f =
      from > at ? std::log2(bytes / at) / std::log2(from / at) : 1.0;  // 0 at the measured size, 1 at `from`
  if (f >= 1) return in.recursiveScaleLarge;
  return in.recursiveScale + f * (in.recursiveScaleLarge - in.recursiveScale);
}

double EstimateUs(const std::string& algorithm, CollKind kind, uint64_t bytes, const CostInputs& in) {
  const Model m(in);
  const double n = static_cast<double>(bytes);
  if (in.nranks <= 1) return kind == CollKind::AlltoAll || algorithm == "ring" || algorithm == "chain" ? m.copy(n) : -1;
  if (algorithm == "chain") return m.chainCost(kind, n);
  if (algorithm == "rhd" && in.nranks == 2) {
    // On two ranks rhd sends what the ring sends, but its doubling step copies the reduced half into the FIFO in a
    // pass of its own where the ring sends it as it reduces: the ring's estimate (its measured small time included)
    // and that copy. (Costed as the ring alone, the two tied, and a tenth of a microsecond between the calibration's
    // small times decided; in 17 two-rank jobs of selector_perf rhd took 1.03-1.46x the ring's time from 4 to 256 MiB,
    // 0.88-1.22x from 64 KiB to 2 MiB, where the first call's timing decides.)
    const double ring = EstimateUs("ring", kind, bytes, in);
    return ring >= 0 && kind == CollKind::AllReduce ? ring + m.copy(n / 2) : ring;
  }
  auto cost = [&](const std::string& name, double bytes) {
    if (name == "ring") return m.ringCost(kind, bytes);
    if (name == "direct") return m.directCost(kind, bytes);
    if (name == "tree") return m.treeCost(kind, bytes);
    if (name == "rd" || name == "rhd") {
      // Their per-byte terms scaled by what the calibration saw against the ring (recursiveScale).
      const double t = name == "rd" ? m.rdCost(kind, bytes) : m.rhdCost(kind, bytes);
      const double latency = name == "rd" ? m.rdCost(kind, 0) : m.rhdCost(kind, 0);
      double scale = RecursiveScaleAt(in, bytes);
      // rd's own factor is its allreduce's, whose exchanges carry the whole vector; its reduce-scatter and allgather
      // halve and double as rhd's do (on 4 ranks the factor 0.74 gave rd the reduce-scatter at 4 MiB, where it ran
      // 1.29-1.35x slower than the ring; docs/PERFORMANCE.md, "Seventeenth session").
      if (name == "rd" && in.nranks >= 3 && kind == CollKind::AllReduce) scale *= in.rdScaleFactor;
      return t >= 0 && scale != 1.0 ? latency + scale * (t - latency) : t;
    }
    if (name == "oneshot") return m.oneshotCost(kind, bytes);
    if (name == "twoshot") return m.twoshotCost(kind, bytes);
    if (name == "hier") return m.hierCost(kind, bytes);
    if (name == "hier_leader") return m.hierLeaderCost(kind, bytes);
    if (name == "pairwise") return m.pairwiseCost(kind, bytes);
    return kNotApplicable;
  };
  const double t = cost(algorithm, n);
  if (t < 0 || kind != CollKind::AllReduce) return t;
  // A measured small-message time stands for the model's latency term.
  double measured = 0;
  auto it = in.smallUs.find(algorithm);
  if (it != in.smallUs.end()) {
    measured = it->second;
  } else if (algorithm == "rhd" && (it = in.smallUs.find("rd")) != in.smallUs.end() && cost("rd", 0) > 0) {
    measured = it->second * cost("rhd", 0) / cost("rd", 0);  // the same exchanges, twice
  }
  return measured > 0 ? measured + (t - cost(algorithm, 0)) : t;
}

CostChoice ChooseCheapest(const std::vector<std::string>& candidates, CollKind kind, uint64_t bytes,
                          const CostInputs& in) {
  CostChoice best;
  for (const std::string& name : candidates) {
    const double t = EstimateUs(name, kind, bytes, in);
    if (t < 0) continue;
    if (best.algorithm.empty() || t < best.estimateUs) best = CostChoice{name, t};
  }
  return best;
}

}  // namespace strata
