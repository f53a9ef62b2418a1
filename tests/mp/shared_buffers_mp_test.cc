// Collectives on buffers from strataMemAlloc, which the ranks of one host map into each other: results against a
// float64 reference call after call, buffers freed and allocated again (a peer must not keep the old mapping, nor
// every mapping it ever made), one rank passing ordinary memory for a while, and the in-place plan run instead of
// the selector's only where every rank's buffers are shared.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/call_trial.h"
#include "mp/mp_harness.h"

namespace strata {
namespace test {
namespace {

// Mappings of strataMemAlloc buffers in this process: its own and its peers'.
int SharedBufferMappings() {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) n += line.find("/memfd:strata-buffer") != std::string::npos;
  return n;
}

struct SharedSet {
  float* a = nullptr;
  float* b = nullptr;
};

std::string Allocate(SharedSet* s, size_t elems) {
  void* a = nullptr;
  void* b = nullptr;
  if (strataMemAlloc(&a, elems * sizeof(float)) != strataSuccess ||
      strataMemAlloc(&b, elems * sizeof(float)) != strataSuccess)
    return std::string("strataMemAlloc: ") + strataGetLastError(nullptr);
  s->a = static_cast<float*>(a);
  s->b = static_cast<float*>(b);
  return "";
}

std::string Free(SharedSet* s) {
  if (strataMemFree(s->a) != strataSuccess || strataMemFree(s->b) != strataSuccess)
    return std::string("strataMemFree: ") + strataGetLastError(nullptr);
  *s = SharedSet{};
  return "";
}

// Three ranks whose selector is the model alone (no calibration): the ring for the 8, 24 and 48 MiB allreduces below.
// STRATA_HUGE_PAGES=`after`; `tune` false: STRATA_TUNE=0, so the in-place plan runs outright wherever every rank's
// buffers allow it (no trial, InPlaceTrialOn below).
MpOptions ModelRanks(int after, bool tune) {
  MpOptions o;
  o.nranks = 3;
  o.timeoutSec = 240;
  o.beforeInit = [after, tune](int) {
    setenv("STRATA_CALIBRATE", "0", 1);
    setenv("STRATA_TUNE", tune ? "1" : "0", 1);
    setenv("STRATA_HUGE_PAGES", std::to_string(after).c_str(), 1);
  };
  return o;
}

TEST(SharedBuffers, CallAfterCall) {
  if (!CrossMemoryAttachWorks()) GTEST_SKIP() << "process_vm_readv/writev between processes is refused here";
  // The 8 MiB allreduce's ring, which every rank's shared buffers turn into twoshot outright. No huge pages: rank 1's
  // ordinary buffers must keep the ring (HugePages below).
  MpResult res = RunRanks(ModelRanks(0, false), [&](int r, int n, strataComm_t comm) -> std::string {
    const size_t big = 2100000, counts[] = {2049, 70001, 300001};
    const size_t most = std::max<size_t>(big, 300001 * n);
    SharedSet sets[2];
    std::string err = Allocate(&sets[0], most);
    if (err.empty()) err = Allocate(&sets[1], most);
    std::vector<float> plainA(most), plainB(most);
    for (int call = 0; call < 60 && err.empty(); ++call) {
      // One rank frees one set and allocates it again every third call: new ids, often at the same addresses.
      if (call % 3 == 2 && (call / 3) % n == r) {
        err = Free(&sets[call % 2]);
        if (err.empty()) err = Allocate(&sets[call % 2], most);
        if (!err.empty()) break;
      }
      const FamilyColl c = static_cast<FamilyColl>(call % 3);
      const size_t count = c == FamilyColl::kAllReduce && call % 2 == 0 ? big : counts[(call / 3) % 3];
      const bool inPlace = (call / 6) % 2 == 1;
      const bool plain = call >= 30 && call < 45;  // rank 1 passes ordinary memory
      float* a = plain && r == 1 ? plainA.data() : sets[call % 2].a;
      float* b = plain && r == 1 ? plainB.data() : sets[call % 2].b;
      auto in = [&](int q, size_t i) {
        return static_cast<float>((q + 1) * 1000 + call * 7 + static_cast<int>(i % 5));
      };
      const std::string what = "call " + std::to_string(call) + " (" + FamilyCollName(c) + ", " +
                               std::to_string(count) + (inPlace ? ", in place" : "") + (plain ? ", rank 1 plain" : "") +
                               ")";
      std::string ran;
      err = RunAndCheckFamilyCall(c, comm, r, n, count, inPlace, a, b, in, what, &ran);
      const std::string want = plain ? "ring" : "twoshot";
      if (err.empty() && count == big && ran != want) err = what + ": ran " + ran + ", expected " + want;
    }
    // A peer drops its mappings of the buffers an owner freed when it next reaches that owner's buffers in place. Rank
    // 1 frees a set before the last call above, whose plan may not reach its peers' buffers (then it publishes
    // nothing, and the other half of its window still names the freed set's buffers): one 8 MiB allreduce on each
    // set, twoshot in place as above, and every peer must have dropped the freed ones, not kept them as published.
    for (int call = 60; call < 62 && err.empty(); ++call) {
      SharedSet& set = sets[call % 2];
      auto in = [&](int q, size_t i) { return static_cast<float>((q + 1) * 100 + call + static_cast<int>(i % 3)); };
      const std::string what = "call " + std::to_string(call) + " (allreduce, " + std::to_string(big) + ")";
      std::string ran;
      err = RunAndCheckFamilyCall(FamilyColl::kAllReduce, comm, r, n, big, false, set.a, set.b, in, what, &ran);
      if (err.empty() && ran != "twoshot") err = what + ": ran " + ran + ", expected twoshot";
    }
    // Its own four buffers, and of each peer at most the four its window publishes (two calls' send and receive):
    // the mappings of buffers a peer freed are gone.
    const int mappings = SharedBufferMappings();
    if (err.empty() && mappings > 4 + 4 * (n - 1))
      err =
          std::to_string(mappings) + " mappings of shared buffers, expected at most " + std::to_string(4 + 4 * (n - 1));
    for (SharedSet& s : sets)
      if (err.empty()) err = Free(&s);
    return err;
  });
  EXPECT_TRUE(res.ok()) << res.summary();
}

// A shared buffer smaller than the call's count: the peer whose part lies beyond it gets strataInvalidUsage saying so,
// not a fault on its mapping; the others fail too (that peer stops), none hangs.
TEST(SharedBuffers, ABufferSmallerThanTheCountIsRefused) {
  if (!CrossMemoryAttachWorks()) GTEST_SKIP() << "process_vm_readv/writev between processes is refused here";
  MpOptions o;
  o.nranks = 3;
  o.timeoutSec = 120;
  o.commTimeoutMs = 20000;
  MpResult res = RunRanks(o, [&](int r, int, strataComm_t comm) -> std::string {
    const size_t count = 300000;
    // Rank 0's input holds its own part and rank 1's (two thirds): rank 2's part lies beyond it.
    const size_t have = r == 0 ? count * 2 / 3 + 10 : count;
    void* send = nullptr;
    void* recv = nullptr;
    if (strataMemAlloc(&send, have * sizeof(float)) != strataSuccess ||
        strataMemAlloc(&recv, count * sizeof(float)) != strataSuccess)
      return std::string("strataMemAlloc: ") + strataGetLastError(nullptr);
    strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
    cfg.algorithm = "allreduce:twoshot";
    strataComm_t sub = nullptr;
    if (strataCommSplit(comm, 0, r, &sub, &cfg) != strataSuccess) return std::string("split failed");
    std::string err;
    const strataResult_t rc = strataAllReduce(send, recv, count, strataFloat32, strataSum, sub, nullptr);
    const std::string why = rc == strataSuccess ? "" : strataGetLastError(sub);
    if (r == 2 && (rc != strataInvalidUsage || why.find("strataMemAlloc") == std::string::npos ||
                   why.find("as large as the count") == std::string::npos))
      err = "rank 2: " + std::string(strataGetErrorString(rc)) + ": " + why;
    if (r != 2 && rc == strataSuccess) err = "succeeded with rank 0's buffer too small";
    strataCommAbort(sub);
    strataMemFree(send);
    strataMemFree(recv);
    return err;
  });
  EXPECT_TRUE(res.ok()) << res.summary();
}

// With STRATA_TUNE on, the in-place plan is timed against the selector's on the calls themselves: an 8 MiB allreduce
// on shared buffers, out of place, in place, and mixed (rank 0 in place, the others not), each a trial of its own
// whose calls run twoshot and the selector's algorithm in turns of two calls, ABBA BAAB; after it every rank runs one
// and the same of the two, and the out-of-place shape keeps its outcome after the other trials. Before them the size
// class's own trial runs (too long a class to time at its first call, on one host: its candidates take turns on its
// calls); where it keeps twoshot itself, no in-place trial follows and every later call runs twoshot. Every result
// checked against float64 sums.
TEST(SharedBuffers, InPlaceTrialOn) {
  if (!CrossMemoryAttachWorks()) GTEST_SKIP() << "process_vm_readv/writev between processes is refused here";
  MpResult res = RunRanks(ModelRanks(0, true), [&](int r, int n, strataComm_t comm) -> std::string {
    const size_t count = 2100000;
    // 1: twoshot, 0: the selector's; turns of two calls, ABBA BAAB
    const std::vector<int> order = {1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0};
    SharedSet set;
    std::string err = Allocate(&set, count);
    int call = 0;
    auto run = [&](const std::string& what, bool inPlace, std::string* ran) {
      auto in = [&](int q, size_t e) { return static_cast<float>((q + 1) * 100 + call + static_cast<int>(e % 7)); };
      ++call;
      return RunAndCheckFamilyCall(FamilyColl::kAllReduce, comm, r, n, count, inPlace, set.a, set.b, in, what, ran);
    };
    // The class's trial, out of place: whole once its calls follow a CallTrial's turns.
    std::vector<std::string> classCalls;
    while (err.empty() &&
           classCalls.size() < static_cast<size_t>(CallTrial::Calls(CallTrial::kMaxPlans, kClassTurns))) {
      std::string ran;
      err = run("the class's trial, call " + std::to_string(classCalls.size()), false, &ran);
      classCalls.push_back(ran);
      const int plans = CallTrialPlansIn(classCalls);
      if (plans > 0 && classCalls.size() == static_cast<size_t>(CallTrial::Calls(plans, kClassTurns))) break;
    }
    if (err.empty() && CallTrialPlansIn(classCalls) == 0) err = "the class's first calls were no trial";
    // The selector's algorithm for the class: the in-place trial's first turn (two calls) is twoshot, so its third call
    // tells.
    std::string selectors;
    // `calls` calls of one placement; the first `trial` of them must follow `order`; the algorithm the rest ran.
    auto phase = [&](const char* name, int calls, size_t trial, bool inPlace, std::string* kept) {
      for (int i = 0; i < calls && err.empty(); ++i) {
        const std::string what = std::string(name) + " call " + std::to_string(i);
        std::string ran;
        err = run(what, inPlace, &ran);
        if (!err.empty()) break;
        if (i == 2 && selectors.empty()) selectors = ran;  // the selector's turn, or twoshot kept by the class
        if (static_cast<size_t>(i) < trial && selectors != "twoshot") {
          const std::string want = order[i] ? "twoshot" : selectors;
          if (ran != want) err = what + ": ran " + ran + ", the trial's turn is " + want;
          continue;
        }
        // After the trial: one of the two, the same on every rank and at every call.
        if (kept->empty()) *kept = ran;
        int32_t mine = ran == "twoshot", all[8] = {};
        if (strataAllGather(&mine, all, 1, strataInt32, comm, nullptr) != strataSuccess)
          err = what + ": allgather: " + strataGetLastError(comm);
        for (int q = 0; q < n && err.empty(); ++q)
          if (all[q] != mine) err = what + ": rank " + std::to_string(q) + " ran another plan than " + ran;
        if (err.empty() && (ran != *kept || (ran != "twoshot" && ran != selectors)))
          err = what + ": ran " + ran + " after the trial kept " + *kept;
      }
    };
    std::string outOfPlace, inPlace, mixed;
    phase("out of place", 20, order.size(), false, &outOfPlace);
    phase("in place", 20, order.size(), true, &inPlace);
    phase("mixed", 20, order.size(), r == 0, &mixed);
    phase("out of place again", 4, 0, false, &outOfPlace);
    if (err.empty()) err = Free(&set);
    return err;
  });
  EXPECT_TRUE(res.ok()) << res.summary();
}

// Ordinary (malloc) buffers on huge pages after STRATA_HUGE_PAGES calls: from that call on, the 24 MiB allreduce whose
// selector's plan is the ring runs twoshot in place, results checked against float64 sums each call; a rank that
// passes new buffers keeps every rank on the ring until its own have been passed as often; with 0, never.
void RunHugePageCalls(int after) {
  if (!CrossMemoryAttachWorks()) GTEST_SKIP() << "process_vm_readv/writev between processes is refused here";
  MpResult res = RunRanks(ModelRanks(after, false), [&](int r, int n, strataComm_t comm) -> std::string {
    const size_t count = 6300001;  // 24 MiB and 4 bytes: whole 2 MiB stretches hold 11/12 of each buffer or more
    std::vector<float> a(count), b(count), newA, newB;
    const bool collapses = after > 0 && KernelCollapsesHugePages();
    // Rank 1's passes of its buffers (the fewest of any rank from call 6 on): the old pair's, then the new pair's.
    int passes[2][2] = {{0, 0}, {0, 0}};  // [pair][send, receive]
    std::string err;
    for (int call = 0; call < 12 && err.empty(); ++call) {
      const bool inPlace = call % 2 == 1;  // the receive buffer alone
      const int pair = call >= 6;          // rank 1 passes new buffers from call 6
      if (r == 1 && pair && newA.empty()) newA.resize(count), newB.resize(count);
      float* x = r == 1 && pair ? newA.data() : a.data();
      float* y = r == 1 && pair ? newB.data() : b.data();
      passes[pair][0] += !inPlace;
      passes[pair][1] += 1;
      const bool reachable = passes[pair][1] >= after && (inPlace || passes[pair][0] >= after);
      auto in = [&](int q, size_t i) { return static_cast<float>((q + 1) * 100 + call + static_cast<int>(i % 7)); };
      const std::string what = "call " + std::to_string(call) + (inPlace ? " in place" : "");
      std::string ran;
      err = RunAndCheckFamilyCall(FamilyColl::kAllReduce, comm, r, n, count, inPlace, x, y, in, what, &ran);
      const std::string want = collapses && reachable ? "twoshot" : "ring";
      if (err.empty() && ran != want) err = what + ": ran " + ran + ", expected " + want;
    }
    return err;
  });
  EXPECT_TRUE(res.ok()) << res.summary();
}

// Over the out-of-place limit (32 MiB) a buffer moves only when passed in place, up to 64 MiB: a 48 MiB allreduce keeps
// the ring out of place, before and after; in place its buffer moves from its third in-place call on, 16 stretches a
// call, so the fourth runs twoshot in place. Every result checked against float64 sums.
TEST(HugePages, LargeBuffersMoveWhenPassedInPlace) {
  if (!CrossMemoryAttachWorks()) GTEST_SKIP() << "process_vm_readv/writev between processes is refused here";
  MpResult res = RunRanks(ModelRanks(3, false), [&](int r, int n, strataComm_t comm) -> std::string {
    const size_t count = 12600001;  // 48 MiB and 4 bytes: 23 whole 2 MiB stretches at least
    std::vector<float> a(count), b(count);
    const bool collapses = KernelCollapsesHugePages();
    std::string err;
    int inPlaceCalls = 0;
    for (int call = 0; call < 12 && err.empty(); ++call) {
      const bool inPlace = call >= 3 && call < 9;
      inPlaceCalls += inPlace;
      auto in = [&](int q, size_t i) { return static_cast<float>((q + 1) * 100 + call + static_cast<int>(i % 7)); };
      const std::string what = "call " + std::to_string(call) + (inPlace ? " in place" : "");
      std::string ran;
      err =
          RunAndCheckFamilyCall(FamilyColl::kAllReduce, comm, r, n, count, inPlace, a.data(), b.data(), in, what, &ran);
      const std::string want = collapses && inPlace && inPlaceCalls >= 4 ? "twoshot" : "ring";
      if (err.empty() && ran != want) err = what + ": ran " + ran + ", expected " + want;
    }
    // The two buffers' mappings, or their one mapping where the kernel merged them: only b's stretches moved.
    uintptr_t startA = 0, startB = 0;
    const long kbA = HugeKbOfMapping(a.data(), &startA), kbB = HugeKbOfMapping(b.data(), &startB);
    const long huge = startA == startB ? kbB : kbA + kbB, ofB = static_cast<long>(count / 256);
    if (err.empty() && collapses && (huge < ofB * 3 / 4 || huge > ofB + 4096))
      err = std::to_string(huge) + " KiB of the two buffers on huge pages, where " + std::to_string(ofB) +
            " KiB passed in place, and as much not";
    return err;
  });
  EXPECT_TRUE(res.ok()) << res.summary();
}

TEST(HugePages, OrdinaryBuffersRunInPlaceOnceCollapsed) { RunHugePageCalls(3); }
TEST(HugePages, NeverWithZero) { RunHugePageCalls(0); }

}  // namespace
}  // namespace test
}  // namespace strata
