// Every collective's plans, for 1-64 simulated ranks, against a naive reference computed here.
// Tiny FIFO slots make even small counts run many pipelined rounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "algorithms/algorithms.h"
#include "exec/host_reduce.h"
#include "sim/plan_simulator.h"
#include "unit/algorithms/sim_case.h"

namespace strata {
namespace {

const int kRankCounts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 31, 32, 33, 64};

using namespace simcase;  // NOLINT: the shared case helpers

std::vector<uint64_t> CountsFor(int n, uint64_t chunk) { return {0, 1, 7, static_cast<uint64_t>(n) + 1, 3 * chunk * n + 5}; }

void Sweep(CollKind kind, std::vector<strataRedOp_t> ops) {
  for (int n : kRankCounts) {
    for (int channels : {1, 3}) {
      const PlanGeometry geo = TinyGeometry(n, channels);
      for (strataRedOp_t op : ops) {
        for (strataDataType_t t : {strataFloat32, strataInt32, strataFloat64}) {
          if (n > 17 && t != strataFloat32) continue;  // the big rings once per op are enough
          for (uint64_t count : CountsFor(n, RingChunkElems(geo, DataTypeSize(t)))) {
            CollDesc d;
            d.kind = kind;
            d.count = count;
            d.dtype = t;
            d.op = op;
            d.root = n > 1 ? (n / 2 + 1) % n : 0;
            for (bool inPlace : {false, true}) {
              if (inPlace && kind == CollKind::AlltoAll) continue;  // rejected by the API
              RunCase(d, geo, inPlace);
              if (::testing::Test::HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
}

TEST(CollectivePlans, AllReduceAllOps) {
  Sweep(CollKind::AllReduce, {strataSum, strataProd, strataMax, strataMin, strataAvg});
}
TEST(CollectivePlans, ReduceScatter) { Sweep(CollKind::ReduceScatter, {strataSum, strataMax, strataAvg}); }
TEST(CollectivePlans, AllGather) { Sweep(CollKind::AllGather, {strataSum}); }
TEST(CollectivePlans, Broadcast) { Sweep(CollKind::Broadcast, {strataSum}); }
TEST(CollectivePlans, Reduce) { Sweep(CollKind::Reduce, {strataSum, strataMin, strataAvg}); }
TEST(CollectivePlans, AlltoAll) { Sweep(CollKind::AlltoAll, {strataSum}); }

TEST(CollectivePlans, EveryRootOfBroadcastAndReduce) {
  for (int n : {2, 3, 5, 8}) {
    for (int root = 0; root < n; ++root) {
      for (CollKind kind : {CollKind::Broadcast, CollKind::Reduce}) {
        CollDesc d;
        d.kind = kind;
        d.count = 1000;
        d.root = root;
        RunCase(d, TinyGeometry(n, 2), false);
      }
    }
  }
}

// A receiver whose plan expects a different count must fail with a clear error, not hang.
TEST(CollectivePlans, MismatchedCountsFailCleanly) {
  const PlanGeometry geo = TinyGeometry(2, 1);
  std::vector<Plan> plans;
  std::vector<std::vector<char>> mem(2, std::vector<char>(4096));
  std::vector<std::vector<void*>> bind(2);
  for (int r = 0; r < 2; ++r) {
    CollDesc d;
    d.count = r == 0 ? 100 : 60;
    PlanGeometry g = geo;
    g.rank = r;
    plans.push_back(BuildCollectivePlan(d, g));
    bind[r] = {mem[r].data(), mem[r].data() + 1024, mem[r].data() + 2048};
  }
  Status st = SimulatePlans(plans, bind, geo);
  EXPECT_FALSE(st.ok());
}

TEST(CollectivePlans, PlanPrintsAsJson) {
  CollDesc d;
  d.count = 10;
  PlanGeometry g = TinyGeometry(2, 1);
  g.directMaxBytes = 0;
  const std::string json = RingAllReducePlan(d, g).toJson();
  EXPECT_NE(json.find("\"algorithm\":\"ring\""), std::string::npos);
  EXPECT_NE(json.find("\"op\":\"recvReduceCopySend\""), std::string::npos);
}

}  // namespace
}  // namespace strata
