// Every collective's plans, for 1-64 simulated ranks, against a naive reference computed here.
// Tiny FIFO slots make even small counts run many pipelined rounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "algorithms/algorithms.h"
#include "exec/host_reduce.h"
#include "sim/plan_simulator.h"

namespace strata {
namespace {

const int kRankCounts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 31, 32, 33, 64};

// Small integers: sums and products of up to 64 of them are exact in float and double.
double InputValue(int rank, uint64_t i, strataRedOp_t op) {
  if (op == strataProd) return ((rank + i) % 5 == 0) ? 2.0 : (((rank + i) % 3 == 0) ? -1.0 : 1.0);
  return static_cast<double>(static_cast<int>((rank * 7 + i * 13) % 11) - 5);
}

void Store(strataDataType_t t, void* base, uint64_t i, double v) {
  if (t == strataFloat32) static_cast<float*>(base)[i] = static_cast<float>(v);
  else if (t == strataFloat64) static_cast<double*>(base)[i] = v;
  else static_cast<int32_t*>(base)[i] = static_cast<int32_t>(v);
}

double Load(strataDataType_t t, const void* base, uint64_t i) {
  if (t == strataFloat32) return static_cast<const float*>(base)[i];
  if (t == strataFloat64) return static_cast<const double*>(base)[i];
  return static_cast<const int32_t*>(base)[i];
}

double Combine(strataRedOp_t op, double a, double b) {
  switch (op) {
    case strataProd: return a * b;
    case strataMax: return std::max(a, b);
    case strataMin: return std::min(a, b);
    default: return a + b;
  }
}

// The expected value of element i of `rank`'s receive buffer, from first principles.
double Expected(const CollDesc& d, int n, int rank, uint64_t i) {
  auto reduceAt = [&](uint64_t idx) {
    double acc = InputValue(0, idx, d.op);
    for (int q = 1; q < n; ++q) acc = Combine(d.op, acc, InputValue(q, idx, d.op));
    if (d.op == strataAvg) acc /= n;
    return acc;
  };
  switch (d.kind) {
    case CollKind::AllReduce:
    case CollKind::Reduce: return reduceAt(i);
    case CollKind::Broadcast: return InputValue(d.root, i, d.op);
    case CollKind::AllGather: return InputValue(static_cast<int>(i / d.count), i % d.count, d.op);
    case CollKind::ReduceScatter: return reduceAt(rank * d.count + i);
    case CollKind::AlltoAll: return InputValue(static_cast<int>(i / d.count), rank * d.count + i % d.count, d.op);
  }
  return 0;
}

struct Sizes {
  uint64_t sendElems, recvElems;
};

Sizes SizesOf(const CollDesc& d, int n) {
  switch (d.kind) {
    case CollKind::AllGather: return {d.count, d.count * n};
    case CollKind::ReduceScatter: return {d.count * n, d.count};
    case CollKind::AlltoAll: return {d.count * n, d.count * n};
    default: return {d.count, d.count};
  }
}

void RunCase(const CollDesc& d, const PlanGeometry& geo, bool inPlace) {
  const int n = geo.nranks;
  const size_t es = DataTypeSize(d.dtype);
  const Sizes sz = SizesOf(d, n);
  std::vector<SimRankBuffers> bufs(n);
  for (int r = 0; r < n; ++r) {
    bufs[r].send.assign(sz.sendElems * es + 1, 0);
    bufs[r].recv.assign(std::max(sz.recvElems, sz.sendElems) * es + 1, 0x5a);  // poisoned
    // In place, the input lives in the receive buffer (at the rank's block for allgather).
    char* in = bufs[r].send.data();
    if (inPlace && d.kind != CollKind::ReduceScatter)
      in = d.kind == CollKind::AllGather ? bufs[r].recv.data() + r * d.count * es : bufs[r].recv.data();
    for (uint64_t i = 0; i < sz.sendElems; ++i) Store(d.dtype, in, i, InputValue(r, i, d.op));
  }
  Status st = SimulateCollective(d, geo, &bufs, inPlace);
  ASSERT_TRUE(st.ok()) << CollKindName(d.kind) << " n=" << n << " count=" << d.count << ": " << st.message();
  for (int r = 0; r < n; ++r) {
    if (d.kind == CollKind::Reduce && r != d.root) continue;
    const char* out = bufs[r].recv.data();
    if (inPlace && d.kind == CollKind::ReduceScatter) out = bufs[r].send.data() + r * d.count * es;
    for (uint64_t i = 0; i < sz.recvElems; ++i) {
      const double want = Expected(d, n, r, i), got = Load(d.dtype, out, i);
      const double tol = d.op == strataAvg ? 1e-6 * (1 + std::fabs(want)) : 0;
      double wantTyped = want;
      if (d.dtype == strataInt32 && d.op == strataAvg) wantTyped = std::trunc(want);
      ASSERT_LE(std::fabs(got - wantTyped), d.dtype == strataInt32 && d.op == strataAvg ? 1.0 : tol)
          << CollKindName(d.kind) << " n=" << n << " rank " << r << " count " << d.count << " elem " << i
          << " channels " << geo.nchannels << (inPlace ? " in-place" : "");
    }
  }
}

PlanGeometry TinyGeometry(int n, int channels) {
  PlanGeometry g;
  g.nranks = n;
  g.slotBytes = 64;  // 16 floats: pipelines with many rounds at small counts
  g.nslots = 4;
  g.nchannels = channels;
  g.directMaxBytes = 64;
  return g;
}

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
