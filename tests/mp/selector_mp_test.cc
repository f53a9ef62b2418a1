// The selector on real communicators: every rank calibrates on its own clock, yet all ranks must pick
// the same algorithm for every call (a disagreement would hang or corrupt the collective). Each rank
// gathers the name strataCommGetLastAlgorithm reports after every call and compares it with its
// peers'; the results are checked against values computed here. Where the model's candidates are close, every
// rank times them at a size class's first call and all must settle on the same one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/call_trial.h"
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

// Every rank's name of the algorithm its last call ran, gathered; empty when all ranks ran the same one.
std::string SameOnEveryRank(strataComm_t comm, int r, int n, const std::string& ran, const std::string& what) {
  Name mine{};
  strncpy(mine.text, ran.c_str(), sizeof(mine.text) - 1);
  std::vector<Name> all(n);
  if (strataAllGather(&mine, all.data(), sizeof(Name), strataUint8, comm, nullptr) != strataSuccess)
    return what + ": gathering names: " + strataGetLastError(comm);
  for (int q = 0; q < n; ++q)
    if (strcmp(all[q].text, mine.text) != 0)
      return what + ": rank " + std::to_string(r) + " ran " + mine.text + " but rank " + std::to_string(q) + " ran " +
             all[q].text;
  return "";
}

// `calls` allreduces of `count` floats on `nranks` ranks of one host (two sizes of one class: `count` and 1001 more,
// on the same buffers), each result checked against sums computed here and every rank's algorithm compared with its
// peers' at every call, into *ran; STRATA_HUGE_PAGES=`hugePages`. `stop` (optional) ends the calls early.
void RunClassCalls(int nranks, size_t count, int hugePages, int calls,
                   const std::function<bool(const std::vector<std::string>&)>& stop,
                   const std::function<std::string(const std::vector<std::string>&)>& judge) {
  if (!CrossMemoryAttachWorks()) GTEST_SKIP() << "process_vm_readv/writev between processes is refused here";
  MpOptions o;
  o.nranks = nranks;
  o.timeoutSec = 240;
  o.beforeInit = [hugePages](int) { setenv("STRATA_HUGE_PAGES", std::to_string(hugePages).c_str(), 1); };
  MpResult res = RunRanks(o, [&](int r, int n, strataComm_t comm) -> std::string {
    const size_t counts[2] = {count, count + 1001};
    std::vector<std::string> ran;
    for (int call = 0; call < calls && !(stop && stop(ran)); ++call) {
      std::string name;
      const std::string what = "call " + std::to_string(call);
      std::string err = RunAndCheck(comm, r, n, 0, counts[call % 2], &name);
      if (!err.empty()) return what + ": " + err;
      err = SameOnEveryRank(comm, r, n, name, what);
      if (!err.empty()) return err;
      ran.push_back(name);
    }
    std::string err = judge(ran);
    if (err.empty()) return "";
    for (const std::string& a : ran) err += " " + a;
    return err;
  });
  EXPECT_TRUE(res.ok()) << res.summary();
}

// 32 MiB on 3 ranks: the class's candidates (the ring, beside twoshot by cross-memory attach at least) do not fit the
// first call's timing budget, so they are timed on its calls.
void RunLargeClass(int hugePages, int calls, const std::function<bool(const std::vector<std::string>&)>& stop,
                   const std::function<std::string(const std::vector<std::string>&)>& judge) {
  RunClassCalls(3, size_t{8} << 20, hugePages, calls, stop, judge);
}

// Without huge pages, the class's first calls take turns among its candidates exactly as CallTrial orders them; after
// them one of the candidates runs every call on every rank.
TEST(ClassTrial, ALargeClassIsTimedOnItsCalls) {
  auto trialAndFour = [](const std::vector<std::string>& ran) {
    const int plans = CallTrialPlansIn(ran);
    return plans > 0 && ran.size() >= static_cast<size_t>(CallTrial::Calls(plans, kClassTurns) + 4);
  };
  auto judge = [](const std::vector<std::string>& ran) {
    const int plans = CallTrialPlansIn(ran);
    if (plans == 0) return std::string("the first calls did not take turns as a trial's do:");
    const auto trialEnd = ran.begin() + CallTrial::Calls(plans, kClassTurns);
    for (auto it = trialEnd; it != ran.end(); ++it)
      if (*it != ran.back()) return "after the trial of " + std::to_string(plans) + " plans, not one algorithm:";
    if (std::find(ran.begin(), trialEnd, ran.back()) == trialEnd)
      return "the class kept " + ran.back() + ", none of its candidates:";
    return std::string();
  };
  RunLargeClass(0, CallTrial::Calls(CallTrial::kMaxPlans, kClassTurns) + 4, trialAndFour, judge);
}

// With huge pages (STRATA_HUGE_PAGES=3), twoshot's calls before the buffers have moved are not counted and twoshot
// runs again: the calls of the other candidates still follow CallTrial's turns (twoshot's left out), twoshot runs its
// trial calls and the 2 before the move at least, and every rank runs the same plan at every call (a rank out of
// step would hang).
TEST(ClassTrial, CallsBeforeTheBuffersMoveAreNotCounted) {
  if (!KernelCollapsesHugePages()) GTEST_SKIP() << "this kernel does not collapse memory onto huge pages";
  RunLargeClass(3, 48, nullptr, [](const std::vector<std::string>& ran) {
    std::vector<std::string> candidates;
    for (const std::string& a : ran)
      if (std::find(candidates.begin(), candidates.end(), a) == candidates.end()) candidates.push_back(a);
    const int plans = static_cast<int>(candidates.size());
    if (plans < 2 || std::find(candidates.begin(), candidates.end(), "twoshot") == candidates.end())
      return std::string("no trial with twoshot among its candidates:");
    std::vector<std::string> turns, others;
    for (int i = 0; i < CallTrial::Calls(plans, kClassTurns); ++i)
      if (candidates[CallTrial::Turn(plans, i, kClassTurns)] != "twoshot")
        turns.push_back(candidates[CallTrial::Turn(plans, i, kClassTurns)]);
    for (const std::string& a : ran)
      if (a != "twoshot") others.push_back(a);
    if (others.size() < turns.size() || !std::equal(turns.begin(), turns.end(), others.begin()))
      return std::string("the other candidates' calls did not follow the trial's turns:");
    for (size_t i = turns.size(); i < others.size(); ++i)
      if (others[i] != others.back()) return std::string("after the trial, not one algorithm:");
    // Up to the other candidates' last turn: twoshot's turns before it in the trial, and its first two calls again,
    // which come before the third pass of the buffers moves them (the other candidates' calls do not count towards the
    // move).
    int turnsBefore = 0, ranBefore = 0;
    for (int i = 0, seen = 0; i < CallTrial::Calls(plans, kClassTurns) && seen < static_cast<int>(turns.size()); ++i) {
      const bool two = candidates[CallTrial::Turn(plans, i, kClassTurns)] == "twoshot";
      turnsBefore += two;
      seen += !two;
    }
    for (size_t i = 0, seen = 0; i < ran.size() && seen < turns.size(); ++i) {
      ranBefore += ran[i] == "twoshot";
      seen += ran[i] != "twoshot";
    }
    if (ranBefore < turnsBefore + 2)
      return "twoshot ran " + std::to_string(ranBefore) +
             " calls before the others' last turn, where the trial counts " + std::to_string(turnsBefore) +
             " and its first two come before the buffers move:";
    if (ran.back() != ran[ran.size() - 2]) return std::string("the last calls ran different algorithms:");
    return std::string();
  });
}

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
