// The selector on real communicators: every rank calibrates on its own clock, yet all ranks must pick
// the same algorithm for every call (a disagreement would hang or corrupt the collective). Each rank
// gathers the name strataCommGetLastAlgorithm reports after every call and compares it with its
// peers'; the results are checked against values computed here. Where the model's candidates are close, every
// rank times them at a size class's first call and all must settle on the same one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "mp/mp_harness.h"

namespace strata {
namespace test {
namespace {

float In(int rank, size_t i) { return static_cast<float>(static_cast<int>((rank * 5 + i * 3) % 13) - 6); }

struct Name {
  char text[24];
};

// One collective of `count` floats; empty on success, else what went wrong. `*ran` gets the name.
std::string RunAndCheck(strataComm_t comm, int r, int n, int which, size_t count, std::string* ran) {
  const size_t sendN = which == 2 ? count * n : count;  // reduce-scatter: n blocks in
  const size_t recvN = which == 1 ? count * n : count;  // allgather: n blocks out
  std::vector<float> send(sendN + 1), recv(recvN + 1, -999.0f);
  for (size_t i = 0; i < sendN; ++i) send[i] = In(r, i);
  strataResult_t rc = strataSuccess;
  const char* what = "";
  switch (which) {
    case 0:
      what = "allreduce";
      rc = strataAllReduce(send.data(), recv.data(), count, strataFloat32, strataSum, comm, nullptr);
      break;
    case 1:
      what = "allgather";
      rc = strataAllGather(send.data(), recv.data(), count, strataFloat32, comm, nullptr);
      break;
    case 2:
      what = "reducescatter";
      rc = strataReduceScatter(send.data(), recv.data(), count, strataFloat32, strataSum, comm, nullptr);
      break;
    default:
      what = "broadcast";
      rc = strataBroadcast(send.data(), recv.data(), count, strataFloat32, 0, comm, nullptr);
      break;
  }
  const std::string label = std::string(what) + " of " + std::to_string(count);
  if (rc != strataSuccess) return label + ": " + strataGetLastError(comm);
  const char* name = nullptr;
  if (strataCommGetLastAlgorithm(comm, &name) != strataSuccess || !name) return label + ": no algorithm name";
  *ran = name;
  for (size_t i = 0; i < recvN; ++i) {
    double want = 0;
    if (which == 0 || which == 2) {
      const size_t idx = which == 2 ? r * count + i : i;
      for (int q = 0; q < n; ++q) want += In(q, idx);
    } else if (which == 1) {
      want = In(static_cast<int>(i / count), i % count);
    } else {
      want = In(0, i);
    }
    if (std::fabs(recv[i] - want) > 1e-6)
      return label + " (" + name + "): element " + std::to_string(i) + " is " + std::to_string(recv[i]) +
             ", expected " + std::to_string(want);
  }
  return "";
}

// `calibrate`, `tune`: STRATA_CALIBRATE and STRATA_TUNE on every rank. With tuning on (the default), the counts of
// 5000 floats and more fall in size classes whose close candidates are timed at their first call, and on one host of
// 2 ranks the small classes oneshot keeps too (against rd, and the ring for the allgather and reduce-scatter).
void RunAgreement(bool tcp, int nodes, bool calibrate, bool tune = true, int nranks = 4) {
  MpOptions o;
  o.nranks = nranks;
  o.tcp = tcp;
  o.nodes = nodes;
  o.timeoutSec = 120;
  o.beforeInit = [calibrate, tune](int) {
    setenv("STRATA_CALIBRATE", calibrate ? "1" : "0", 1);
    setenv("STRATA_TUNE", tune ? "1" : "0", 1);
  };
  MpResult res = RunRanks(o, [&](int r, int n, strataComm_t comm) -> std::string {
    std::set<std::string> seen;
    for (int which = 0; which < 4; ++which) {
      for (size_t count : {size_t{1}, size_t{100}, size_t{5000}, size_t{70000}, size_t{600000}}) {
        std::string ran;
        std::string err = RunAndCheck(comm, r, n, which, count, &ran);
        if (!err.empty()) return err;
        seen.insert(ran);
        Name mine{};
        strncpy(mine.text, ran.c_str(), sizeof(mine.text) - 1);
        std::vector<Name> all(n);
        if (strataAllGather(&mine, all.data(), sizeof(Name), strataUint8, comm, nullptr) != strataSuccess)
          return std::string("gathering names: ") + strataGetLastError(comm);
        for (int q = 0; q < n; ++q)
          if (strcmp(all[q].text, mine.text) != 0)
            return "call " + std::to_string(which) + " of " + std::to_string(count) + ": rank " + std::to_string(r) +
                   " ran " + mine.text + " but rank " + std::to_string(q) + " ran " + all[q].text;
      }
    }
    if (seen.size() < 2) return "the selector picked one algorithm for every collective and size";
    return "";
  });
  EXPECT_TRUE(res.ok()) << res.summary();
}

TEST(SelectorAgreement, SharedMemoryCalibrated) { RunAgreement(false, 1, true); }
TEST(SelectorAgreement, TcpCalibrated) { RunAgreement(true, 1, true); }
TEST(SelectorAgreement, TwoHostsCalibrated) { RunAgreement(false, 2, true); }
TEST(SelectorAgreement, TwoHostsFromTopologyOnly) { RunAgreement(false, 2, false); }
TEST(SelectorAgreement, SharedMemoryModelOnly) { RunAgreement(false, 1, true, false); }
TEST(SelectorAgreement, SharedMemoryTwoRanksCalibrated) { RunAgreement(false, 1, true, true, 2); }

// Timing candidates runs collectives: a rank that would not time them must not join the others.
TEST(SelectorAgreement, TuneMustMatchOnEveryRank) {
  MpOptions o;
  o.nranks = 3;
  o.timeoutSec = 60;
  o.beforeInit = [](int r) { setenv("STRATA_TUNE", r == 1 ? "0" : "1", 1); };
  MpResult res = RunRanks(o, [](int, int, strataComm_t) -> std::string { return ""; });
  ASSERT_EQ(res.failures.size(), 3u) << res.summary();
  for (const std::string& f : res.failures) {
    EXPECT_NE(f.find("init failed"), std::string::npos) << f;
    EXPECT_NE(f.find("STRATA_TUNE"), std::string::npos) << f;
  }
}

}  // namespace
}  // namespace test
}  // namespace strata
