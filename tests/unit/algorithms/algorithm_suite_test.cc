// Every algorithm of the table on every collective it serves, forced as STRATA_ALGO would force it,
// through the plan simulator for 1-64 ranks and every size edge, against the float64 reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/algo_spec.h"
#include "algorithms/algorithm_table.h"
#include "algorithms/algorithms.h"
#include "algorithms/plan_builder.h"
#include "algorithms/tree_emit.h"
#include "exec/host_reduce.h"
#include "sim/plan_simulator.h"
#include "unit/algorithms/in_place_sizes.h"
#include "unit/algorithms/sim_case.h"

namespace strata {
namespace {

using simcase::RunCase;
using simcase::TinyGeometry;

const int kRankCounts[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 31, 32, 64};
const CollKind kKinds[] = {CollKind::AllReduce,     CollKind::Broadcast, CollKind::Reduce, CollKind::AllGather,
                           CollKind::ReduceScatter, CollKind::AlltoAll};

ForcedAlgos Force(CollKind kind, AlgoId id) {
  ForcedAlgos f;
  f.algo[static_cast<int>(kind)] = static_cast<int8_t>(id);
  return f;
}

CollDesc Desc(CollKind kind, uint64_t count, int n, strataDataType_t t = strataFloat32, strataRedOp_t op = strataSum) {
  CollDesc d;
  d.kind = kind;
  d.count = count;
  d.dtype = t;
  d.op = kind == CollKind::AllGather || kind == CollKind::Broadcast || kind == CollKind::AlltoAll ? strataSum : op;
  d.root = n > 1 ? (n / 2 + 1) % n : 0;
  return d;
}

// 0, 1, odd, a little over one element per rank, and several FIFOs' worth that is no multiple of
// the pipeline chunk.
std::vector<uint64_t> Counts(int n, uint64_t chunk) { return {0, 1, 7, static_cast<uint64_t>(n) + 1, 2 * chunk * n + 5}; }

// What runs when `id` is forced and the shape does not fit it (see the table's constraints).
std::string ExpectedName(AlgoId id, const CollDesc& d, const PlanGeometry& g) {
  if (g.nranks == 1) return "local";
  const uint64_t es = DataTypeSize(d.dtype);
  if (id == AlgoId::Direct && d.count * es > g.slotBytes * g.nslots) return "ring";
  if (id == AlgoId::OneShot || id == AlgoId::TwoShot) {
    // The window holds the input (reduce-scatter: all n blocks); two-shot allreduce also the reduced parts.
    uint64_t need = d.kind == CollKind::ReduceScatter ? d.count * g.nranks : d.count;
    if (id == AlgoId::TwoShot && d.kind == CollKind::AllReduce) need *= 2;
    if (need * es > g.windowBytes) {
      if (d.kind != CollKind::AllReduce) return "ring";
      return d.count * es <= g.slotBytes * g.nslots ? "direct" : "ring";
    }
  }
  return GetAlgoInfo(id).name;
}

// Flat algorithms (hier is covered with host layouts below).
TEST(AlgorithmSuite, EveryAlgorithmEveryCollectiveEveryRankCount) {
  for (const AlgoInfo& a : AlgoTable()) {
    if (!a.implemented || a.id == AlgoId::Hier || a.id == AlgoId::HierLeader) continue;
    for (CollKind kind : kKinds) {
      if (!AlgoServes(a.id, kind)) continue;
      for (int n : kRankCounts) {
        for (int channels : {1, 2}) {
          if (channels == 2 && n > 8) continue;
          const PlanGeometry geo = TinyGeometry(n, channels);
          for (uint64_t count : Counts(n, RingChunkElems(geo, 4))) {
            const CollDesc d = Desc(kind, count, n);
            for (bool inPlace : {false, true}) {
              if (inPlace && (kind == CollKind::AlltoAll || n > 8)) continue;
              std::string ran;
              RunCase(d, geo, inPlace, Force(kind, a.id), &ran);
              if (::testing::Test::HasFatalFailure()) return;
              ASSERT_EQ(ran, ExpectedName(a.id, d, geo)) << a.name << " " << CollKindName(kind) << " n=" << n;
            }
          }
        }
      }
    }
  }
}

TEST(AlgorithmSuite, OpsAndTypes) {
  for (const AlgoInfo& a : AlgoTable()) {
    if (!a.implemented || a.id == AlgoId::Hier || a.id == AlgoId::HierLeader) continue;
    for (CollKind kind : {CollKind::AllReduce, CollKind::Reduce, CollKind::ReduceScatter}) {
      if (!AlgoServes(a.id, kind)) continue;
      for (int n : {5, 8}) {
        const PlanGeometry geo = TinyGeometry(n, 1);
        for (strataRedOp_t op : {strataSum, strataProd, strataMax, strataMin, strataAvg})
          for (strataDataType_t t : {strataFloat32, strataInt32, strataFloat64})
            for (uint64_t count : {uint64_t{7}, 2 * RingChunkElems(geo, DataTypeSize(t)) * n + 3}) {
              RunCase(Desc(kind, count, n, t, op), geo, false, Force(kind, a.id));
              if (::testing::Test::HasFatalFailure()) return;
            }
      }
    }
  }
}

// Rings send the next round's first piece before the last one of a round arrives, and rd/rhd exchanges
// keep a whole FIFO in flight: neither may deadlock at any FIFO depth the knobs allow (STRATA_NSLOTS >= 2).
TEST(AlgorithmSuite, PipelinesFitEveryFifoDepth) {
  for (int nslots : {2, 3, 5, 8}) {
    for (size_t slotBytes : {size_t{64}, size_t{256}}) {
      for (AlgoId id : {AlgoId::Ring, AlgoId::Rd, AlgoId::Rhd, AlgoId::Hier}) {
        for (CollKind kind : {CollKind::AllReduce, CollKind::ReduceScatter, CollKind::AllGather}) {
          if (!AlgoServes(id, kind)) continue;
          for (int n : {2, 3, 4, 5, 8}) {
            PlanGeometry geo = TinyGeometry(n, 1);
            geo.nslots = nslots;
            geo.slotBytes = slotBytes;
            if (id == AlgoId::Hier && n % 2 == 0)
              for (int r = 0; r < n; ++r) geo.hostOf.push_back(r * 2 / n);
            for (strataDataType_t t : {strataFloat32, strataFloat64}) {
              const uint64_t fifo = nslots * slotBytes / DataTypeSize(t);
              for (uint64_t count : {fifo - 1, 3 * fifo * n + 5}) {
                RunCase(Desc(kind, count, n, t), geo, false, Force(kind, id));
                if (::testing::Test::HasFatalFailure())
                  FAIL() << GetAlgoInfo(id).name << " " << CollKindName(kind) << " n=" << n << " nslots=" << nslots
                         << " slot=" << slotBytes;
              }
            }
          }
        }
      }
    }
  }
}

// With cross-memory attach (PlanGeometry::peerAccess) one- and two-shot copy in place from PeerAccessMinBytes on and
// beyond the window: every op and type, in place and not, counts that split into uneven parts and into several
// pieces (kPeerPieceBytes) of a part.
TEST(AlgorithmSuite, CrossMemoryAttachPlans) {
  for (int n : {2, 3, 4, 5, 8}) {
    PlanGeometry geo = TinyGeometry(n, 1);
    geo.peerAccess = true;
    for (strataDataType_t t : {strataFloat32, strataFloat64, strataInt32}) {
      const uint64_t es = DataTypeSize(t), piece = kPeerPieceBytes / es;
      for (CollKind kind : {CollKind::AllReduce, CollKind::AllGather, CollKind::ReduceScatter}) {
        // The allreduce's twoshot splits the vector into n parts; the others' pieces are of one rank's block.
        const uint64_t several = kind == CollKind::AllReduce ? 2 * piece * n + 5 : 2 * piece + 5;
        for (uint64_t count : {uint64_t{0}, uint64_t{1}, uint64_t{7}, kPeerAccessMinBytes / es + 1, several}) {
          const uint64_t whole = (kind == CollKind::AllReduce ? count : count * n) * es;
          for (strataRedOp_t op : {strataSum, strataAvg, strataMax, strataProd}) {
            if (kind == CollKind::AllGather && op != strataSum) continue;
            if (count == several && op != strataSum && op != strataAvg) continue;
            for (bool inPlace : {false, true}) {
              const AlgoId id = kind == CollKind::AllReduce ? AlgoId::TwoShot : AlgoId::OneShot;
              std::string ran;
              RunCase(Desc(kind, count, n, t, op), geo, inPlace, Force(kind, id), &ran);
              if (::testing::Test::HasFatalFailure()) return;
              // Below the size, the window (4096 bytes here) where it fits.
              const bool viaWindow = whole < test::ExpectedInPlaceBytes(kind, n, geo.oversubscribed) &&
                                     whole * (kind == CollKind::AllReduce ? 2 : 1) <= geo.windowBytes;
              if (count > 0 && !viaWindow) {
                ASSERT_EQ(ran, GetAlgoInfo(id).name) << CollKindName(kind) << " n=" << n << " count " << count;
                const Plan plan = BuildPlanWith(id, Desc(kind, count, n, t, op), [&] {
                  PlanGeometry g = geo;
                  g.rank = n - 1;
                  return g;
                }());
                EXPECT_GT(plan.peerElems, 0u);
                EXPECT_EQ(plan.windowElems, 0u);
              }
            }
          }
        }
      }
    }
  }
}

// Where the window holds the call, the allreduce's twoshot and the allgather's and reduce-scatter's oneshot copy in
// place from 8 KiB on 2 ranks (p-1 or 2(p-1) system calls a call). On more, the allreduce from 256 KiB on 3-4 ranks
// with a core each, 512 KiB on more, 256 KiB where ranks share cores; the others from 128 KiB on 3-4 with a core each,
// 256 KiB on more, 512 KiB where ranks share cores.
TEST(AlgorithmSuite, CrossMemoryAttachFromItsSizeOnwards) {
  for (bool oversubscribed : {false, true})
    for (int n : {2, 3, 4, 5, 8}) {
      PlanGeometry geo = TinyGeometry(n, 1);
      geo.peerAccess = true;
      geo.windowBytes = 4 << 20;
      geo.rank = n - 1;
      geo.oversubscribed = oversubscribed;
      for (CollKind kind : {CollKind::AllReduce, CollKind::AllGather, CollKind::ReduceScatter}) {
        const uint64_t from = test::ExpectedInPlaceBytes(kind, n, oversubscribed);
        EXPECT_EQ(PeerAccessMinBytes(kind, n, oversubscribed), from) << CollKindName(kind) << " n=" << n;
        const AlgoId id = kind == CollKind::AllReduce ? AlgoId::TwoShot : AlgoId::OneShot;
        const uint64_t per = kind == CollKind::AllReduce ? 1 : n;  // the whole vector's elements per count
        const uint64_t at = (from + 4 * per - 1) / (4 * per);      // the least count whose whole vector reaches `from`
        for (uint64_t count : {at / 2, at - 1, at, 2 * at}) {
          const uint64_t bytes = count * 4 * per;
          const Plan plan = BuildPlanWith(id, Desc(kind, count, n), geo);
          const bool inPlace = bytes >= from;
          const std::string where = std::string(CollKindName(kind)) + " n=" + std::to_string(n) + " " +
                                    std::to_string(bytes) + " B" + (oversubscribed ? ", oversubscribed" : "");
          EXPECT_EQ(plan.peerElems > 0, inPlace) << where;
          EXPECT_EQ(plan.windowElems > 0, !inPlace) << where;
        }
      }
    }
}

// Through the window, two-shot's copies out: after raising its second flag a rank copies its own reduced part, then
// each peer's in turn (r+1, r+2, ...) right after waiting for that peer's second flag, not after waiting for all of
// them; every part once, the whole vector covered.
TEST(AlgorithmSuite, TwoShotCopiesEachPartOnceItsOwnerHasReducedIt) {
  for (int n : {2, 3, 4, 8})
    for (int r : {0, n - 1}) {
      PlanGeometry geo = TinyGeometry(n, 1);
      geo.windowBytes = 1 << 20;
      geo.rank = r;
      const uint64_t count = 100 * n + 3;
      const Plan plan = BuildPlanWith(AlgoId::TwoShot, Desc(CollKind::AllReduce, count, n), geo);
      ASSERT_EQ(plan.algorithm, "twoshot");
      const std::vector<Step>& steps = plan.queues.at(0).steps;
      size_t i = 0;
      while (i < steps.size() && !(steps[i].op == StepOp::Signal && steps[i].count == 2)) ++i;
      ASSERT_LT(i, steps.size()) << "no second flag, n=" << n;
      ++i;
      while (i < steps.size() && steps[i].op == StepOp::ClaimWindow) ++i;  // the next call's lines (a hint)
      uint64_t copied = 0;
      for (int k = 0; k < n; ++k) {
        const int p = (r + k) % n;
        if (k > 0) {
          ASSERT_LT(i, steps.size());
          EXPECT_EQ(steps[i].op, StepOp::WaitPeer) << "n=" << n << " r=" << r << " part " << p;
          EXPECT_EQ(steps[i].recvPeer, p);
          EXPECT_EQ(steps[i].count, 2u);
          ++i;
        }
        ASSERT_LT(i, steps.size());
        const Step& s = steps[i++];
        EXPECT_EQ(s.op, StepOp::Copy) << "n=" << n << " r=" << r << " part " << p;
        EXPECT_EQ(s.src.buf, kWindowBuf + p);
        EXPECT_EQ(s.src.offset - count, s.dst.offset);  // the result area follows the inputs
        EXPECT_EQ(s.dst.buf, kRecvBuf);
        copied += s.count;
      }
      EXPECT_EQ(i, steps.size());
      EXPECT_EQ(copied, count);
    }
}

// Through the window, a call that writes at most kClaimWindowMaxBytes of its own window claims exactly those lines
// for the next call, and only once every peer's stage-1 flag is up (the peers are done with the other half then) and
// this rank has written all it writes: two-shot after its second flag, one-shot at its end. Larger calls, and those
// that go in place or by the FIFOs, claim nothing.
TEST(AlgorithmSuite, SmallWindowCallsClaimTheLinesTheNextCallWrites) {
  using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;
  auto merged = [](Ranges in) {  // sorted, touching ranges joined
    std::sort(in.begin(), in.end());
    Ranges out;
    for (const auto& x : in) {
      if (!out.empty() && x.first <= out.back().first + out.back().second)
        out.back().second = std::max(out.back().first + out.back().second, x.first + x.second) - out.back().first;
      else
        out.push_back(x);
    }
    return out;
  };
  int claiming = 0, notClaiming = 0;
  for (int n : {2, 3, 4, 8})
    for (int r : {0, n - 1})
      for (CollKind kind : {CollKind::AllReduce, CollKind::AllGather, CollKind::ReduceScatter})
        for (AlgoId id : {AlgoId::OneShot, AlgoId::TwoShot})
          for (uint64_t count : {uint64_t{1}, uint64_t{37}, uint64_t{kClaimWindowMaxBytes / 4 / n},
                                 uint64_t{kClaimWindowMaxBytes / 4 / n + 64}, uint64_t{kClaimWindowMaxBytes}}) {
            PlanGeometry geo = TinyGeometry(n, 1);
            geo.windowBytes = 1 << 20;
            geo.rank = r;
            const Plan plan = BuildPlanWith(id, Desc(kind, count, n), geo);
            const std::string where = std::string(plan.algorithm) + " " + CollKindName(kind) +
                                      " n=" + std::to_string(n) + " r=" + std::to_string(r) +
                                      " count=" + std::to_string(count);
            ASSERT_EQ(plan.queues.size(), 1u) << where;
            ASSERT_GT(plan.windowElems, 0u) << where;
            const std::vector<Step>& steps = plan.queues[0].steps;
            Ranges written, claimed;
            size_t lastStage1Wait = 0, lastWrite = 0, firstClaim = steps.size();
            for (size_t i = 0; i < steps.size(); ++i) {
              const Step& s = steps[i];
              if (s.op == StepOp::WaitPeer && s.count == 1) lastStage1Wait = i;
              if (s.op == StepOp::ClaimWindow) {
                EXPECT_EQ(s.dst.buf, kWindowBuf + r) << where << ": a claim of another rank's window";
                claimed.emplace_back(s.dst.offset, s.count);
                firstClaim = std::min(firstClaim, i);
              } else if ((s.op == StepOp::Copy || s.op == StepOp::LocalReduce) && s.dst.buf == kWindowBuf + r) {
                written.emplace_back(s.dst.offset, s.count);
                lastWrite = i;
              }
            }
            uint64_t writtenElems = 0;
            for (const auto& w : merged(written)) writtenElems += w.second;
            if (writtenElems * 4 > kClaimWindowMaxBytes) {
              EXPECT_TRUE(claimed.empty()) << where;
              ++notClaiming;
              continue;
            }
            ++claiming;
            EXPECT_EQ(merged(claimed), merged(written)) << where;
            EXPECT_GT(firstClaim, lastStage1Wait) << where << ": a claim before every peer's first flag";
            EXPECT_GT(firstClaim, lastWrite) << where << ": a claim before this call's own writes";
          }
  EXPECT_GT(claiming, 0);
  EXPECT_GT(notClaiming, 0);
  // In place (cross-memory attach) and by the FIFOs: no claims.
  for (bool peerAccess : {true, false}) {
    PlanGeometry geo = TinyGeometry(4, 1);
    geo.peerAccess = peerAccess;
    geo.windowBytes = peerAccess ? 1 << 20 : 1024;
    const Plan plan = BuildPlanWith(AlgoId::TwoShot, Desc(CollKind::AllReduce, 1 << 20, 4), geo);
    for (const Step& s : plan.queues.at(0).steps) EXPECT_NE(s.op, StepOp::ClaimWindow) << plan.algorithm;
  }
}

// The in-place allreduce's order within a piece: every peer's part read and reduced before the result is written into
// any peer's output, and no piece larger than kPeerPieceBytes (what stays in cache between the two).
TEST(AlgorithmSuite, CrossMemoryAttachReducesEachPieceBeforeWritingIt) {
  for (int n : {2, 3, 5}) {
    PlanGeometry geo = TinyGeometry(n, 1);
    geo.peerAccess = true;
    geo.rank = 1;
    const uint64_t count = 3 * (kPeerPieceBytes / 4) * n + 11;
    const Plan plan = BuildPlanWith(AlgoId::TwoShot, Desc(CollKind::AllReduce, count, n), geo);
    ASSERT_EQ(plan.queues.size(), 1u);
    uint64_t reduced = 0, written = 0;
    int reducesOfPiece = 0, writesOfPiece = 0;
    for (const Step& s : plan.queues[0].steps) {
      if (s.op == StepOp::PeerReduce) {
        if (writesOfPiece > 0) {  // the next piece
          EXPECT_EQ(writesOfPiece, n - 1);
          reducesOfPiece = writesOfPiece = 0;
        }
        EXPECT_LE(s.count * 4, kPeerPieceBytes);
        EXPECT_EQ(s.src.buf, reducesOfPiece == 0 ? kSendBuf : kRecvBuf);  // its own input first, then the result so far
        EXPECT_EQ(s.peer.buf, kSendBuf);
        EXPECT_EQ(s.peer.offset, s.dst.offset);
        if (++reducesOfPiece == n - 1) reduced += s.count;
      } else if (s.op == StepOp::PeerWrite) {
        EXPECT_EQ(reducesOfPiece, n - 1) << "a write before its piece was reduced";
        EXPECT_EQ(s.peer.buf, kRecvBuf);
        EXPECT_EQ(s.peer.offset, s.src.offset);
        ++writesOfPiece;
        written += s.count;
      } else if (s.op != StepOp::Signal && s.op != StepOp::WaitPeer) {
        ADD_FAILURE() << "unexpected step " << StepOpName(s.op);
      }
    }
    // Rank 1's part of the vector (the first count % n parts have one more element), written to each of n - 1 peers.
    const uint64_t part = count / n + (1 < count % n ? 1 : 0);
    EXPECT_EQ(reduced, part) << n;
    EXPECT_EQ(written, part * (n - 1)) << n;
  }
}

TEST(AlgorithmSuite, EveryRootOfTreeBroadcastAndReduce) {
  for (int n : {2, 3, 7, 8, 12}) {
    for (int root = 0; root < n; ++root) {
      for (CollKind kind : {CollKind::Broadcast, CollKind::Reduce}) {
        CollDesc d = Desc(kind, 301, n, strataFloat32, strataAvg);
        d.root = root;
        RunCase(d, TinyGeometry(n, 2), false, Force(kind, AlgoId::Tree));
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

struct HostShape {
  const char* name;
  std::vector<int> hostOf;
  bool uniform;
};

std::vector<HostShape> HostShapes() {
  auto contiguous = [](int hosts, int per) {
    std::vector<int> h;
    for (int r = 0; r < hosts * per; ++r) h.push_back(r / per);
    return h;
  };
  auto roundRobin = [](int hosts, int per) {
    std::vector<int> h;
    for (int r = 0; r < hosts * per; ++r) h.push_back(r % hosts);
    return h;
  };
  return {
      {"2x2", contiguous(2, 2), true},          {"2x3 round robin", roundRobin(2, 3), true},
      {"4x2", contiguous(4, 2), true},          {"3x4", contiguous(3, 4), true},
      {"5x3 round robin", roundRobin(5, 3), true}, {"8x8", contiguous(8, 8), true},
      {"uneven 3+2", {0, 0, 0, 1, 1}, false},   {"one host", contiguous(1, 4), false},
      {"one rank per host", contiguous(4, 1), false},
  };
}

TEST(AlgorithmSuite, HierarchicalOnHostLayouts) {
  for (const HostShape& shape : HostShapes()) {
    const int n = static_cast<int>(shape.hostOf.size());
    for (int channels : {1, 2}) {
      PlanGeometry geo = TinyGeometry(n, channels);
      geo.hostOf = shape.hostOf;
      for (AlgoId id : {AlgoId::Hier, AlgoId::HierLeader}) {
        for (CollKind kind : kKinds) {
          if (!AlgoServes(id, kind)) continue;
          for (uint64_t count : Counts(n, RingChunkElems(geo, 4))) {
            for (strataRedOp_t op : {strataSum, strataAvg}) {
              const CollDesc d = Desc(kind, count, n, strataFloat32, op);
              for (bool inPlace : {false, true}) {
                std::string ran;
                RunCase(d, geo, inPlace, Force(kind, id), &ran);
                if (::testing::Test::HasFatalFailure()) return;
                const bool rooted = kind == CollKind::Broadcast || kind == CollKind::Reduce;
                const std::string want = shape.uniform ? GetAlgoInfo(id).name : rooted ? "chain" : "ring";
                ASSERT_EQ(ran, want) << shape.name << " " << CollKindName(kind);
              }
            }
          }
        }
      }
    }
  }
}

// A large hierarchical allreduce, reduce-scatter or allgather runs in pieces on two queues per channel, the exchange
// between hosts waiting on the phase within the host (or the other way round): the plans have those queues and
// waits, and their results are the reference's on 2 hosts x 2 and 3 hosts x 2 ranks, in and out of place, over a
// count that is no multiple of the pieces.
TEST(AlgorithmSuite, LargeHierarchicalCallsRunInPiecesOnTwoQueues) {
  for (const std::vector<int>& hostOf : {std::vector<int>{0, 0, 1, 1}, std::vector<int>{0, 0, 1, 1, 2, 2}}) {
    const int n = static_cast<int>(hostOf.size());
    for (int channels : {1, 2}) {
      PlanGeometry geo = TinyGeometry(n, channels);
      geo.hostOf = hostOf;
      const uint64_t fifo = geo.nslots * geo.slotBytes / sizeof(float);  // a piece is 4 FIFOs of the whole vector
      for (CollKind kind : {CollKind::AllReduce, CollKind::ReduceScatter, CollKind::AllGather}) {
        const uint64_t perRank = kind == CollKind::AllReduce ? 1 : n;  // the whole vector over the call's count
        const uint64_t count = 4 * fifo * 5 * channels / perRank + 3;  // 5 pieces a channel, and a remainder
        for (int r = 0; r < n; ++r) {
          geo.rank = r;
          const Plan plan = BuildPlanWith(AlgoId::Hier, Desc(kind, count, n), geo);
          ASSERT_EQ(plan.algorithm, "hier");
          size_t waits = 0;
          for (const PlanQueue& q : plan.queues)
            for (const Step& st : q.steps) waits += st.waitQueue >= 0;
          EXPECT_EQ(plan.queues.size(), static_cast<size_t>(2 * channels)) << CollKindName(kind) << " rank " << r;
          EXPECT_GE(waits, static_cast<size_t>(4 * channels)) << CollKindName(kind) << " rank " << r;
        }
        for (bool inPlace : {false, true}) {
          RunCase(Desc(kind, count, n), geo, inPlace, Force(kind, AlgoId::Hier));
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// The chain of a reduce over several hosts runs the broadcast's chain backwards, from root-1 down to the root: with
// root 0 and a host's ranks numbered together it crosses from host to host once per boundary, where the chain from
// root+1 up to the root wraps from the last host to the first as well. On one host it keeps that forward order. Both
// give the reference's sums from every root.
TEST(AlgorithmSuite, ChainReduceAcrossHostsRunsTheBroadcastsChainBackwards) {
  for (const std::vector<int>& hostOf : {std::vector<int>{0, 0, 1, 1}, std::vector<int>{0, 1, 2, 3},
                                         std::vector<int>{0, 0, 0, 1, 1, 1}, std::vector<int>{0, 0, 1}}) {
    const int n = static_cast<int>(hostOf.size());
    for (bool spans : {true, false}) {
      PlanGeometry geo = TinyGeometry(n, 1);
      if (spans) geo.hostOf = hostOf;
      for (int root = 0; root < n; ++root) {
        CollDesc d = Desc(CollKind::Reduce, 203, n);
        d.root = root;
        // Each rank's partner it takes the partial sum from: the next rank up (backwards) or down (forwards).
        int crossings = 0;
        for (int r = 0; r < n; ++r) {
          geo.rank = r;
          const Plan plan = BuildPlanWith(AlgoId::Chain, d, geo);
          ASSERT_EQ(plan.algorithm, "chain");
          const Step& st = plan.queues.back().steps.at(0);
          if (r == Mod(root + (spans ? -1 : 1), n)) {
            EXPECT_EQ(st.recvPeer, -1) << "rank " << r << " starts the chain";
            continue;
          }
          EXPECT_EQ(st.recvPeer, Mod(r + (spans ? 1 : -1), n)) << "rank " << r << " root " << root;
          crossings += hostOf[st.recvPeer] != hostOf[r];
        }
        const int hosts = hostOf.back() + 1;
        if (spans && root == 0) {
          EXPECT_EQ(crossings, hosts - 1) << n << " ranks";
        }
        for (bool inPlace : {false, true}) {
          RunCase(d, geo, inPlace, Force(CollKind::Reduce, AlgoId::Chain));
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(AlgorithmSuite, HierRootedAtEveryRank) {
  PlanGeometry geo = TinyGeometry(6, 1);
  geo.hostOf = {0, 1, 2, 0, 1, 2};
  for (int root = 0; root < 6; ++root)
    for (CollKind kind : {CollKind::Broadcast, CollKind::Reduce}) {
      CollDesc d = Desc(kind, 203, 6);
      d.root = root;
      RunCase(d, geo, false, Force(kind, AlgoId::Hier));
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// Random floats, where the order of additions changes the bits: every rank must still hold the
// same bits, whichever algorithm ran.
TEST(AlgorithmSuite, AllReduceIsBitIdenticalOnEveryRank) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (AlgoId id : {AlgoId::Ring, AlgoId::Direct, AlgoId::Tree, AlgoId::Rd, AlgoId::Rhd, AlgoId::Hier,
                    AlgoId::HierLeader}) {
    for (int n : {3, 5, 8, 12}) {
      PlanGeometry geo = TinyGeometry(n, 1);
      geo.slotBytes = 4096;
      if (n % 2 == 0)  // two hosts for hier; odd counts run its flat fallback
        for (int r = 0; r < n; ++r) geo.hostOf.push_back(r * 2 / n);
      CollDesc d = Desc(CollKind::AllReduce, id == AlgoId::Direct ? 1000 : 5000, n);
      std::vector<SimRankBuffers> bufs(n);
      for (int r = 0; r < n; ++r) {
        bufs[r].send.resize(d.count * 4);
        bufs[r].recv.resize(d.count * 4);
        float* in = reinterpret_cast<float*>(bufs[r].send.data());
        for (uint64_t i = 0; i < d.count; ++i) in[i] = dist(rng) * static_cast<float>(1 + i % 1000);
      }
      Status st = SimulateCollective(d, geo, &bufs, false, Force(CollKind::AllReduce, id));
      ASSERT_TRUE(st.ok()) << st.message();
      for (int r = 1; r < n; ++r)
        ASSERT_EQ(bufs[r].recv, bufs[0].recv) << GetAlgoInfo(id).name << " n=" << n << " rank " << r;
    }
  }
}

// The executor reads a run of window steps (one-shot's reduction or copies, two-shot's reduction) a 1 KiB piece of
// every step at a time. Random floats, where the order of the operations changes the bits: every element must still be
// the reduction in rank order, computed here by a naive loop, and the allgather every rank's bits.
TEST(AlgorithmSuite, WindowReadsInPiecesKeepTheRankOrder) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (AlgoId id : {AlgoId::OneShot, AlgoId::TwoShot})
    for (CollKind kind : {CollKind::AllReduce, CollKind::ReduceScatter, CollKind::AllGather})
      for (strataRedOp_t op : {strataSum, strataProd})
        for (int n : {2, 3, 4, 8})
          for (uint64_t count : {uint64_t{255}, uint64_t{256}, uint64_t{1000}, uint64_t{2501}}) {
            PlanGeometry geo = TinyGeometry(n, 1);
            geo.windowBytes = 1 << 20;
            CollDesc d = Desc(kind, count, n, strataFloat32, op);
            const uint64_t in = kind == CollKind::ReduceScatter ? count * n : count;
            const uint64_t out = kind == CollKind::AllGather ? count * n : count;
            std::vector<SimRankBuffers> bufs(n);
            for (int r = 0; r < n; ++r) {
              bufs[r].send.resize(in * 4);
              bufs[r].recv.resize(out * 4);
              float* x = reinterpret_cast<float*>(bufs[r].send.data());
              for (uint64_t i = 0; i < in; ++i) x[i] = dist(rng) * (op == strataProd ? 2.0f : 1.0f + i % 100);
            }
            auto input = [&](int r, uint64_t i) { return reinterpret_cast<const float*>(bufs[r].send.data())[i]; };
            std::string algorithm;
            Status st = SimulateCollective(d, geo, &bufs, false, Force(kind, id), &algorithm);
            ASSERT_TRUE(st.ok()) << st.message();
            const std::string where = std::string(GetAlgoInfo(id).name) + " " + CollKindName(kind) + " op " +
                                      std::to_string(op) + " n=" + std::to_string(n) + " count " +
                                      std::to_string(count);
            ASSERT_EQ(algorithm, GetAlgoInfo(id).name) << where;
            for (int r = 0; r < n; ++r) {
              const float* got = reinterpret_cast<const float*>(bufs[r].recv.data());
              for (uint64_t i = 0; i < out; ++i) {
                float want;
                if (kind == CollKind::AllGather) {
                  want = input(static_cast<int>(i / count), i % count);
                } else {
                  const uint64_t at = kind == CollKind::ReduceScatter ? r * count + i : i;
                  want = input(0, at);
                  for (int p = 1; p < n; ++p) want = op == strataSum ? want + input(p, at) : want * input(p, at);
                }
                ASSERT_EQ(std::memcmp(&got[i], &want, 4), 0)
                    << where << " rank " << r << " element " << i << ": " << got[i] << " against " << want;
              }
            }
          }
}

// The two trees of the double binary tree: spanning, binary, shallow, and without a shared edge.
TEST(AlgorithmSuite, DoubleTreesShareNoEdge) {
  for (int m = 2; m <= 130; ++m) {
    std::vector<int> members(m);
    for (int i = 0; i < m; ++i) members[i] = i;
    ParentTable t[2];
    const bool two = DisjointTreePair(members, m, false, &t[0], &t[1]);
    ASSERT_EQ(two, m > 4 && m != 6 && m != 9) << m;
    int depthBound = 1;
    while ((1 << (depthBound - 1)) < m) ++depthBound;
    std::set<std::pair<int, int>> edges;
    for (int k = 0; k < (two ? 2 : 1); ++k) {
      int roots = 0;
      for (int r = 0; r < m; ++r) {
        roots += t[k][r] < 0;
        EXPECT_LE(NodeOf(t[k], r).children.size(), 2u) << m;
        int depth = 0;
        for (int x = r; t[k][x] >= 0 && depth <= m; x = t[k][x]) ++depth;
        EXPECT_LE(depth, depthBound) << "m=" << m << " tree " << k << " rank " << r;
        if (t[k][r] >= 0) {
          const auto e = std::make_pair(std::min(r, t[k][r]), std::max(r, t[k][r]));
          EXPECT_TRUE(edges.insert(e).second) << "m=" << m << " edge " << e.first << "-" << e.second << " twice";
        }
      }
      EXPECT_EQ(roots, 1) << m;
    }
  }
}

// TreeShapeOf against the tree plans themselves: where one tree carries everything, each rank of a reduce sends up
// to one parent only, and the parents, followed to the root, give the depth and the children. On 4 ranks the tree is
// the line root <- a <- b <- c, the chain's shape. Where a pair exists, two trees.
TEST(AlgorithmSuite, TreeShapeIsWhatTheTreePlansBuild) {
  for (int p : {2, 3, 4, 5, 7}) {  // 1, 2, 3, 4 and 6 ranks in the trees: no pair
    std::vector<int> parent(p, -1);
    for (int r = 0; r < p; ++r) {
      CollDesc d;
      d.kind = CollKind::Reduce;
      d.count = 64;
      d.root = 0;
      PlanGeometry g = TinyGeometry(p, 1);
      g.rank = r;
      const Plan plan = TreeReducePlan(d, g);
      std::set<int> sendsTo;
      for (const PlanQueue& q : plan.queues)
        for (const Step& s : q.steps)
          if (s.sendPeer >= 0) sendsTo.insert(s.sendPeer);
      ASSERT_EQ(sendsTo.size(), r == 0 ? 0u : 1u) << "p=" << p << " rank " << r;
      if (r != 0) parent[r] = *sendsTo.begin();
    }
    int depth = 0, maxChildren = 0;
    std::vector<int> children(p, 0);
    for (int r = 1; r < p; ++r) {
      int hops = 0;
      for (int x = r; x != 0 && hops <= p; x = parent[x]) ++hops;
      depth = std::max(depth, hops);
      maxChildren = std::max(maxChildren, ++children[parent[r]]);  // the root's one child counted too
    }
    const TreeShape shape = TreeShapeOf(p, true);
    EXPECT_EQ(shape.ntrees, 1) << p;
    EXPECT_EQ(shape.depth, depth) << p;
    EXPECT_EQ(shape.maxChildren, maxChildren) << p;
  }
  const TreeShape line = TreeShapeOf(4, true);
  EXPECT_EQ(line.depth, 3);
  EXPECT_EQ(line.maxChildren, 1);
  // The allreduce's single tree on 4 ranks, by hand from BtreeParent: 0 <- 2 <- {1, 3}.
  const TreeShape four = TreeShapeOf(4, false);
  EXPECT_EQ(four.ntrees, 1);
  EXPECT_EQ(four.depth, 2);
  EXPECT_EQ(four.maxChildren, 2);
  for (int m : {5, 7, 8, 10, 16, 64}) EXPECT_EQ(TreeShapeOf(m, false).ntrees, 2) << m;
  for (int p : {6, 8, 9, 11, 17, 64}) EXPECT_EQ(TreeShapeOf(p, true).ntrees, 2) << p;  // 5, 7, 8, ... under the root
}

}  // namespace
}  // namespace strata
