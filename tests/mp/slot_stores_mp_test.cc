// The shared-memory slots written with streaming stores (STRATA_SLOT_STORES=streaming, and auto while its tuner
// tries them): every step that writes a slot (send, reduce-and-send, reduce-copy-and-send, copy-and-send) on 4
// ranks over shared memory, in place and out of place, with the algorithms forced, checked against sums computed
// here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "mp/mp_harness.h"

namespace strata {
namespace test {
namespace {

float In(int rank, size_t i, int call) {
  return static_cast<float>(static_cast<int>((rank * 5 + i * 3 + call) % 13) - 6);
}

// "" when out[i] == want(i) for every i, else the first difference.
template <typename Want>
std::string Check(const std::string& what, const std::vector<float>& out, size_t n, Want want) {
  for (size_t i = 0; i < n; ++i)
    if (std::fabs(out[i] - want(i)) > 1e-6)
      return what + ": element " + std::to_string(i) + " is " + std::to_string(out[i]) + ", expected " +
             std::to_string(want(i));
  return "";
}

// Allreduce (ring: the reduce-and-send steps pass 4 ranks' partial sums), allgather (copy-and-send),
// reduce-scatter and broadcast, with `calls` allreduces of the large size so that auto reaches its tries.
std::string RunCollectives(strataComm_t comm, int r, int n, int calls) {
  for (size_t count : {size_t{7}, size_t{100000}, size_t{300001}}) {
    for (int call = 0; call < calls; ++call) {
      const bool inPlace = call % 2 == 1;
      std::vector<float> send(count), recv(count, -99.0f);
      for (size_t i = 0; i < count; ++i) send[i] = In(r, i, call);
      float* out = inPlace ? send.data() : recv.data();
      if (strataAllReduce(send.data(), out, count, strataFloat32, strataSum, comm, nullptr) != strataSuccess)
        return "allreduce: " + std::string(strataGetLastError(comm));
      std::vector<float> got(out, out + count);
      const std::string what =
          "allreduce of " + std::to_string(count) + (inPlace ? " in place" : "") + ", call " + std::to_string(call);
      std::string err = Check(what, got, count, [&](size_t i) {
        double s = 0;
        for (int q = 0; q < n; ++q) s += In(q, i, call);
        return s;
      });
      if (!err.empty()) return err;
    }
    std::vector<float> mine(count), all(count * n, -99.0f);
    for (size_t i = 0; i < count; ++i) mine[i] = In(r, i, 0);
    if (strataAllGather(mine.data(), all.data(), count, strataFloat32, comm, nullptr) != strataSuccess)
      return "allgather: " + std::string(strataGetLastError(comm));
    std::string err = Check("allgather of " + std::to_string(count), all, count * n,
                            [&](size_t i) { return In(static_cast<int>(i / count), i % count, 0); });
    if (!err.empty()) return err;
    std::vector<float> blocks(count * n), part(count, -99.0f);
    for (size_t i = 0; i < count * n; ++i) blocks[i] = In(r, i, 1);
    if (strataReduceScatter(blocks.data(), part.data(), count, strataFloat32, strataSum, comm, nullptr) !=
        strataSuccess)
      return "reduce-scatter: " + std::string(strataGetLastError(comm));
    err = Check("reduce-scatter of " + std::to_string(count), part, count, [&](size_t i) {
      double s = 0;
      for (int q = 0; q < n; ++q) s += In(q, r * count + i, 1);
      return s;
    });
    if (!err.empty()) return err;
    std::vector<float> b(count, -99.0f);
    if (r == 2)
      for (size_t i = 0; i < count; ++i) b[i] = In(2, i, 2);
    if (strataBroadcast(b.data(), b.data(), count, strataFloat32, 2, comm, nullptr) != strataSuccess)
      return "broadcast: " + std::string(strataGetLastError(comm));
    err = Check("broadcast of " + std::to_string(count), b, count, [&](size_t i) { return In(2, i, 2); });
    if (!err.empty()) return err;
  }
  return "";
}

// `algos`: STRATA_ALGO, so that the steps under test run whatever the selector would pick.
void RunWith(const char* stores, int calls, const char* algos) {
  MpOptions o;
  o.nranks = 4;
  o.timeoutSec = 120;
  o.beforeInit = [stores, algos](int) {
    setenv("STRATA_SLOT_STORES", stores, 1);
    setenv("STRATA_ALGO", algos, 1);
  };
  const MpResult res = RunRanks(
      o, [calls](int r, int n, strataComm_t comm) -> std::string { return RunCollectives(comm, r, n, calls); });
  EXPECT_TRUE(res.ok()) << res.summary();
}

const char kRings[] = "allreduce:ring;allgather:ring;reducescatter:ring;broadcast:chain";

TEST(SlotStores, Streaming) { RunWith("streaming", 2, kRings); }

TEST(SlotStores, StreamingTreesAndHalvingDoubling) {
  RunWith("streaming", 2, "allreduce:tree;allgather:rhd;reducescatter:rhd;broadcast:tree");
}

// The tuner tries streaming stores at the second timed call of a class and again later; results stay exact.
TEST(SlotStores, AutoThroughItsTries) { RunWith("auto", 12, kRings); }

TEST(SlotStores, Cached) { RunWith("cached", 2, kRings); }

// Ranks need not agree on STRATA_SLOT_STORES: the calibration's slot-store probe runs on every rank of one host (its
// 1 MiB rings are every rank's calls), and only the ranks at auto start their tuner by it. With the selector choosing,
// results stay exact.
TEST(SlotStores, RanksOfEveryPolicyCalibrateTogether) {
  MpOptions o;
  o.nranks = 4;
  o.timeoutSec = 120;
  o.beforeInit = [](int r) {
    setenv("STRATA_SLOT_STORES", r == 1 ? "cached" : r == 2 ? "streaming" : "auto", 1);
    setenv("STRATA_CALIBRATE", "1", 1);
  };
  const MpResult res =
      RunRanks(o, [](int r, int n, strataComm_t comm) -> std::string { return RunCollectives(comm, r, n, 4); });
  EXPECT_TRUE(res.ok()) << res.summary();
}

}  // namespace
}  // namespace test
}  // namespace strata
