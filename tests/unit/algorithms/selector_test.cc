// The selector: size classes, the cheapest implemented algorithm under the model, caching.
#include "algorithms/selector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace strata {
namespace {

CostInputs Shape(int hosts, int perHost, double netGBs) {
  CostInputs in;
  in.nranks = hosts * perHost;
  in.nhosts = hosts;
  in.ranksPerHost = perHost;
  in.intra = {1.0, 5.0};
  in.inter = {40.0, netGBs};
  in.reduceGBs = 10;
  in.copyGBs = 10;
  return in;
}

TEST(Selector, SizeClassesAreCentredOnPowersOfTwo) {
  EXPECT_EQ(SizeClass(0), -1);
  EXPECT_EQ(SizeClass(1), 0);
  EXPECT_EQ(SizeClass(2), 1);
  EXPECT_EQ(SizeClass(3), 2);  // log2(3) = 1.58
  EXPECT_EQ(SizeClass(1024), 10);
  EXPECT_EQ(SizeClass(1448), 10);  // 1024 x 1.414 = 1448.2
  EXPECT_EQ(SizeClass(1449), 11);
  EXPECT_EQ(SizeClass(uint64_t{1} << 40), 40);
}

// The brute-force answer: every implemented algorithm of the table costed at 2^k, the cheapest kept.
AlgoId Cheapest(CollKind kind, uint64_t bytes, const CostInputs& in) {
  AlgoId best = DefaultAlgo(kind);
  double bestUs = -1;
  for (const AlgoInfo& a : AlgoTable()) {
    if (!a.implemented || !AlgoServes(a.id, kind)) continue;
    const double t = EstimateUs(a.name, kind, bytes, in);
    if (t >= 0 && (bestUs < 0 || t < bestUs)) {
      best = a.id;
      bestUs = t;
    }
  }
  // Up to 4 KiB an allreduce keeps rd unless the cheapest is 1.25x cheaper.
  if (kind == CollKind::AllReduce && bytes <= 4096 && EstimateUs("rd", kind, bytes, in) >= 0 &&
      bestUs * 1.25 > EstimateUs("rd", kind, bytes, in))
    best = AlgoId::Rd;
  return best;
}

// Measured small-message times decide, but rd keeps small allreduces unless another is clearly faster.
TEST(Selector, SmallAllReduceStaysWithRdWithinTheMargin) {
  CostInputs in = Shape(2, 2, 1.25);
  in.smallUs = {{"rd", 30.0}, {"hier", 26.0}, {"direct", 45.0}, {"ring", 60.0}};
  AlgoSelector sel(in);
  EXPECT_EQ(sel.choose(CollKind::AllReduce, 8), AlgoId::Rd);  // hier 1.15x cheaper: within the margin
  in.smallUs["hier"] = 20.0;
  sel.reset(in);
  EXPECT_EQ(sel.choose(CollKind::AllReduce, 8), AlgoId::Hier);  // 1.5x cheaper
  EXPECT_NE(sel.choose(CollKind::AllReduce, 64 << 20), AlgoId::Rd);  // large sizes: the model alone
}

TEST(Selector, PicksTheCheapestImplementedAlgorithmOfEveryCollective) {
  for (const CostInputs& in : {Shape(1, 2, 0), Shape(1, 8, 0), Shape(2, 2, 0.125), Shape(4, 1, 1.25), Shape(2, 4, 0.125)}) {
    AlgoSelector sel(in);
    for (int k = 0; k < kNumCollKinds; ++k) {
      const CollKind kind = static_cast<CollKind>(k);
      for (int e = 3; e <= 28; ++e) {
        const uint64_t bytes = uint64_t{1} << e;
        const AlgoId id = sel.choose(kind, bytes);
        EXPECT_TRUE(GetAlgoInfo(id).implemented);
        EXPECT_TRUE(AlgoServes(id, kind)) << GetAlgoInfo(id).name << " " << CollKindName(kind);
        EXPECT_EQ(id, Cheapest(kind, bytes, in)) << CollKindName(kind) << " " << bytes << " bytes, " << in.nranks
                                                 << " ranks on " << in.nhosts << " hosts";
        // Every size of the class gets the class's choice.
        EXPECT_EQ(sel.choose(kind, bytes + bytes / 3), id);
      }
    }
  }
}

TEST(Selector, SlowNetworkLargeAllReduceGoesHierarchical) {
  AlgoSelector sel(Shape(2, 4, 0.125));
  EXPECT_EQ(sel.choose(CollKind::AllReduce, 64 << 20), AlgoId::Hier);
  EXPECT_NE(sel.choose(CollKind::AllReduce, 8), AlgoId::Ring);
  AlgoSelector oneHost(Shape(1, 4, 0));
  EXPECT_NE(oneHost.choose(CollKind::AllReduce, 64 << 20), AlgoId::Hier);
}

TEST(Selector, EstimatesMatchTheModel) {
  const CostInputs in = Shape(2, 2, 1.25);
  AlgoSelector sel(in);
  EXPECT_DOUBLE_EQ(sel.estimateUs(AlgoId::Ring, CollKind::AllReduce, 1 << 20),
                   EstimateUs("ring", CollKind::AllReduce, 1 << 20, in));
  EXPECT_LT(sel.estimateUs(AlgoId::Pairwise, CollKind::AllReduce, 1 << 20), 0);
}

TEST(Selector, CountsTheWholeVector) {
  CollDesc d;
  d.count = 1000;
  d.dtype = strataFloat32;
  d.kind = CollKind::AllReduce;
  EXPECT_EQ(SelectorBytes(d, 4), 4000u);
  d.kind = CollKind::Broadcast;
  EXPECT_EQ(SelectorBytes(d, 4), 4000u);
  d.kind = CollKind::AllGather;  // count is per rank: the output is 4 x 1000 elements
  EXPECT_EQ(SelectorBytes(d, 4), 16000u);
  d.kind = CollKind::ReduceScatter;
  EXPECT_EQ(SelectorBytes(d, 4), 16000u);
  d.kind = CollKind::AlltoAll;
  d.dtype = strataFloat64;
  EXPECT_EQ(SelectorBytes(d, 3), 24000u);
}

TEST(Selector, ResetForgetsCachedChoices) {
  AlgoSelector sel(Shape(2, 4, 100.0));  // a network faster than shared memory: no reason to go hierarchical
  const AlgoId fast = sel.choose(CollKind::AllReduce, 64 << 20);
  EXPECT_NE(fast, AlgoId::Hier);
  sel.reset(Shape(2, 4, 0.125));
  EXPECT_EQ(sel.choose(CollKind::AllReduce, 64 << 20), AlgoId::Hier);
  EXPECT_EQ(sel.inputs().inter.bandwidthGBs, 0.125);
}

}  // namespace
}  // namespace strata
