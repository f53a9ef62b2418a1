// Faults with real processes: a rank killed (kill -9) in the middle of an allreduce over shared memory
// and over TCP, a rank that stops answering, a peer death seen by the watchdog, an abort from another
// thread, and the timeout message. Survivors must fail fast, name the culprit, and clean up.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "mp/mp_harness.h"

namespace strata {
namespace test {
namespace {

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

int64_t MonotonicMs() {  // CLOCK_MONOTONIC is one clock for every process of the machine
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000ll + ts.tv_nsec / 1000000;
}

// Memory every forked rank shares with the test process: when and who the victim was.
struct Shared {
  std::atomic<int64_t> faultAtMs;
  std::atomic<int> victimPid;
};

Shared* MapShared() {
  void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto* s = new (p) Shared;
  s->faultAtMs.store(0);
  s->victimPid.store(0);
  return s;
}

// /dev/shm entries made by process `pid` (strata names its segments strata-<pid>-...).
std::vector<std::string> ShmEntriesOf(int pid) {
  std::vector<std::string> found;
  const std::string prefix = "strata-" + std::to_string(pid) + "-";
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d))
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) found.push_back(e->d_name);
    closedir(d);
  }
  return found;
}

constexpr int kVictim = 2;

// ---- a rank is killed mid-allreduce ----

class RankKilledTest : public ::testing::TestWithParam<bool> {};

TEST_P(RankKilledTest, SurvivorsNameTheDeadRankLongBeforeTheTimeout) {
  Shared* shared = MapShared();
  ASSERT_NE(shared, nullptr);
  constexpr int kTimeoutMs = 30000;
  constexpr int64_t kFastMs = 5000;  // "well before the timeout"
  MpOptions o;
  o.nranks = 4;
  o.tcp = GetParam();
  o.commTimeoutMs = kTimeoutMs;
  o.timeoutSec = 90;
  const MpResult r = RunRanks(o, [shared](int rank, int n, strataComm_t comm) -> std::string {
    const size_t count = 1 << 20;  // 4 MiB: many slots per call, so the kill lands inside one
    std::vector<float> in(count, static_cast<float>(rank + 1)), out(count, 0.0f);
    if (rank == kVictim) {
      shared->victimPid.store(getpid());
      std::thread([shared] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        shared->faultAtMs.store(MonotonicMs());
        kill(getpid(), SIGKILL);
      }).detach();
    }
    const float want = static_cast<float>(n * (n + 1) / 2);
    for (int it = 0; it < 100000; ++it) {
      const strataResult_t rc = strataAllReduce(in.data(), out.data(), count, strataFloat32, strataSum, comm, nullptr);
      if (rc == strataSuccess) {
        if (out[0] != want || out[count - 1] != want)
          return Format("iteration %d gave %g and %g, want %g", it, out[0], out[count - 1], want);
        continue;
      }
      const int64_t at = MonotonicMs(), faultAt = shared->faultAtMs.load();
      const std::string msg = strataGetLastError(comm);
      std::string err;
      if (faultAt == 0) err += Format("failed before the victim was killed (rc %d): %s; ", rc, msg.c_str());
      if (at - faultAt > kFastMs)
        err += Format("the error came %lld ms after the kill (timeout %d ms); ", static_cast<long long>(at - faultAt),
                      kTimeoutMs);
      if (rc != strataRemoteError) err += Format("returned %d (%s), want strataRemoteError; ", rc, strataGetErrorString(rc));
      if (msg.find("rank " + std::to_string(kVictim)) == std::string::npos)
        err += "the message does not name rank " + std::to_string(kVictim) + ": " + msg + "; ";
      strataResult_t async = strataSuccess;
      if (strataCommGetAsyncError(comm, &async) != strataSuccess || async == strataSuccess)
        err += "strataCommGetAsyncError reports no error after the failure; ";
      if (rank == 0 && err.empty())
        fprintf(stderr, "rank 0 saw after %lld ms: %s\n", static_cast<long long>(at - faultAt), msg.c_str());
      return err;  // the harness destroys the communicator and fails the rank if that fails
    }
    return "100000 allreduces passed: the victim never died";
  });
  EXPECT_TRUE(r.ok()) << r.summary();
  const int victim = shared->victimPid.load();
  EXPECT_GT(victim, 0);
  for (const std::string& e : ShmEntriesOf(victim)) ADD_FAILURE() << "/dev/shm/" << e << " left behind by the victim";
  munmap(shared, sizeof(Shared));
}

INSTANTIATE_TEST_SUITE_P(Transports, RankKilledTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Tcp" : "Shm"; });

// ---- a rank stops answering (no closed socket, no dead pid): the timeout bounds the wait ----

TEST(RankStopped, SurvivorsFailWithinTimeoutPlusTwoSeconds) {
  Shared* shared = MapShared();
  ASSERT_NE(shared, nullptr);
  constexpr int kTimeoutMs = 2000;
  MpOptions o;
  o.nranks = 3;
  o.commTimeoutMs = kTimeoutMs;
  o.timeoutSec = 60;
  const MpResult r = RunRanks(o, [shared](int rank, int, strataComm_t comm) -> std::string {
    const size_t count = 1 << 18;
    std::vector<float> in(count, 1.0f), out(count, 0.0f);
    if (rank == kVictim) {
      shared->victimPid.store(getpid());
      std::thread([shared] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        shared->faultAtMs.store(MonotonicMs());
        kill(getpid(), SIGSTOP);
      }).detach();
    }
    std::string err;
    for (int it = 0; it < 1000000; ++it) {
      const strataResult_t rc = strataAllReduce(in.data(), out.data(), count, strataFloat32, strataSum, comm, nullptr);
      if (rc == strataSuccess) continue;
      const int64_t late = MonotonicMs() - shared->faultAtMs.load();
      const std::string msg = strataGetLastError(comm);
      if (late > kTimeoutMs + 2000)
        err += Format("failed %lld ms after the rank stopped (timeout %d ms): %s; ", static_cast<long long>(late),
                      kTimeoutMs, msg.c_str());
      if (rc != strataTimeout && rc != strataRemoteError) err += Format("returned %d: %s; ", rc, msg.c_str());
      if (msg.find("rank ") == std::string::npos) err += "the message names no rank: " + msg + "; ";
      if (rank == 0 && err.empty())
        fprintf(stderr, "rank 0 saw after %lld ms: %s\n", static_cast<long long>(late), msg.c_str());
      break;
    }
    // The stopped rank never finishes on its own.
    if (rank == 0) kill(shared->victimPid.load(), SIGKILL);
    return err;
  });
  EXPECT_TRUE(r.ok()) << r.summary();
  munmap(shared, sizeof(Shared));
}

// ---- the timeout names the collective and the silent peer ----

TEST(Timeout, NamesTheCollectiveAndThePeer) {
  constexpr int kTimeoutMs = 1000;
  MpOptions o;
  o.nranks = 2;
  o.commTimeoutMs = kTimeoutMs;
  o.timeoutSec = 60;
  const MpResult r = RunRanks(o, [](int rank, int, strataComm_t comm) -> std::string {
    if (rank == 1) {  // never calls; stays alive so that only the timeout can end rank 0's wait
      std::this_thread::sleep_for(std::chrono::milliseconds(kTimeoutMs + 1500));
      return "";
    }
    std::vector<int32_t> in(1000, 1), out(1000, 0);
    const int64_t start = MonotonicMs();
    const strataResult_t rc = strataAllReduce(in.data(), out.data(), in.size(), strataInt32, strataSum, comm, nullptr);
    const int64_t took = MonotonicMs() - start;
    const std::string msg = strataGetLastError(comm);
    std::string err;
    if (rc != strataTimeout) err += Format("returned %d (%s), want strataTimeout; ", rc, strataGetErrorString(rc));
    if (took < kTimeoutMs || took > kTimeoutMs + 2000) err += Format("returned after %lld ms; ", static_cast<long long>(took));
    for (const char* word : {"AllReduce of 1000 x int32", "rank 1", "timed out after 1000 ms"})
      if (msg.find(word) == std::string::npos) err += std::string("message lacks \"") + word + "\": " + msg + "; ";
    // A timed-out communicator refuses further calls at once instead of waiting again.
    const int64_t again = MonotonicMs();
    const strataResult_t rc2 = strataAllReduce(in.data(), out.data(), in.size(), strataInt32, strataSum, comm, nullptr);
    if (rc2 != strataTimeout || MonotonicMs() - again > 200)
      err += Format("a call after the timeout returned %d after %lld ms: %s; ", rc2,
                    static_cast<long long>(MonotonicMs() - again), strataGetLastError(comm));
    strataResult_t async = strataSuccess;
    if (strataCommGetAsyncError(comm, &async) != strataSuccess || async != strataTimeout)
      err += Format("strataCommGetAsyncError gave %d, want strataTimeout; ", async);
    return err;
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

// ---- init: the ranks that never joined are named ----

TEST(InitTimeout, NamesTheRankThatNeverJoined) {
  MpOptions o;
  o.nranks = 3;
  o.commTimeoutMs = 2000;
  o.timeoutSec = 60;
  o.beforeInit = [](int rank) {
    if (rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(4000));  // past everyone's timeout
  };
  const int64_t start = MonotonicMs();
  const MpResult r = RunRanks(o, [](int, int, strataComm_t) -> std::string { return "init succeeded"; });
  const int64_t took = MonotonicMs() - start;
  ASSERT_EQ(r.failures.size(), 3u) << r.summary();
  for (int rank = 0; rank < 2; ++rank) {
    const std::string& f = r.failures[rank];
    EXPECT_NE(f.find("rank " + std::to_string(rank) + ": init failed"), std::string::npos) << f;
    EXPECT_NE(f.find("2 of 3 ranks joined; rank(s) 2 never connected"), std::string::npos) << f;
  }
  EXPECT_LT(took, 4000 + 2000 + 3000) << "the late rank waits 4 s, then its own init must fail within its timeout";
}

// ---- the watchdog thread reports a peer that died between calls ----

TEST(AsyncError, WatchdogReportsADeadPeerWithoutAnyCall) {
  MpOptions o;
  o.nranks = 3;
  o.commTimeoutMs = 30000;
  o.timeoutSec = 60;
  const MpResult r = RunRanks(o, [](int rank, int, strataComm_t comm) -> std::string {
    strataResult_t async = strataCommAborted;
    if (strataCommGetAsyncError(comm, &async) != strataSuccess || async != strataSuccess)
      return Format("a healthy communicator reports async error %d", async);
    if (rank == kVictim) kill(getpid(), SIGKILL);
    const int64_t start = MonotonicMs();
    while (MonotonicMs() - start < 5000) {
      if (strataCommGetAsyncError(comm, &async) != strataSuccess) return "strataCommGetAsyncError failed";
      if (async != strataSuccess) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::string msg = strataGetLastError(comm);
    if (async != strataRemoteError) return Format("async error is %d after 5 s, want strataRemoteError", async);
    if (msg.find("rank 2 (pid") == std::string::npos) return "the async error does not name rank 2: " + msg;
    return "";
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

// ---- a peer that destroyed its communicator and exited did not die ----

TEST(AsyncError, APeerThatDestroyedItsCommunicatorAndExitedIsNoError) {
  MpOptions o;
  o.nranks = 3;
  o.commTimeoutMs = 30000;
  o.timeoutSec = 60;
  o.destroyComm = false;
  const MpResult r = RunRanks(o, [](int rank, int, strataComm_t comm) -> std::string {
    std::vector<float> in(64, 1.0f), out(64, 0.0f);
    if (strataAllReduce(in.data(), out.data(), in.size(), strataFloat32, strataSum, comm, nullptr) != strataSuccess)
      return std::string("first allreduce: ") + strataGetLastError(comm);
    if (rank == 2)  // done with the job: leaves, and its process exits
      return strataCommDestroy(comm) == strataSuccess ? "" : std::string("destroy: ") + strataGetLastError(nullptr);
    std::string err;
    // Five of the watchdog's looks after rank 2 exited: no asynchronous error.
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    strataResult_t async = strataCommAborted;
    if (strataCommGetAsyncError(comm, &async) != strataSuccess || async != strataSuccess)
      err += Format("async error %d after rank 2 left: %s; ", async, strataGetLastError(comm));
    // A call that needs rank 2 fails at once, saying it left.
    const int64_t start = MonotonicMs();
    const strataResult_t rc =
        strataAllReduce(in.data(), out.data(), in.size(), strataFloat32, strataSum, comm, nullptr);
    const std::string msg = strataGetLastError(comm);
    if (rc != strataRemoteError) err += Format("a call after rank 2 left returned %d: %s; ", rc, msg.c_str());
    if (msg.find("rank 2 (pid") == std::string::npos || msg.find("destroyed its communicator") == std::string::npos)
      err += "the call's error does not say rank 2 left: " + msg + "; ";
    if (MonotonicMs() - start > 5000) err += Format("the call took %lld ms; ", (long long)(MonotonicMs() - start));
    if (strataCommDestroy(comm) != strataSuccess) err += std::string("destroy: ") + strataGetLastError(nullptr);
    return err;
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

// ---- strataCommAbort from another thread unblocks a waiting call within 1 s ----

TEST(Abort, FromAnotherThreadUnblocksAWaitingCallWithinOneSecond) {
  MpOptions o;
  o.nranks = 2;
  o.commTimeoutMs = 60000;
  o.timeoutSec = 60;
  o.destroyComm = false;
  const MpResult r = RunRanks(o, [](int rank, int, strataComm_t comm) -> std::string {
    if (rank == 1) {  // never joins the call; destroys once rank 0 is surely done
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      return strataCommDestroy(comm) == strataSuccess ? "" : std::string("destroy: ") + strataGetLastError(nullptr);
    }
    std::atomic<int64_t> abortAt{0}, abortReturned{0};
    std::atomic<int> abortRc{-1};
    std::thread aborter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      abortAt.store(MonotonicMs());
      abortRc.store(strataCommAbort(comm));
      abortReturned.store(MonotonicMs());
    });
    std::vector<float> in(1 << 16, 1.0f), out(1 << 16, 0.0f);
    const strataResult_t rc = strataAllReduce(in.data(), out.data(), in.size(), strataFloat32, strataSum, comm, nullptr);
    const int64_t returned = MonotonicMs();
    aborter.join();
    std::string err;
    if (rc != strataCommAborted) err += Format("the blocked call returned %d, want strataCommAborted; ", rc);
    if (abortAt.load() == 0 || returned - abortAt.load() > 1000)
      err += Format("the call returned %lld ms after strataCommAbort", static_cast<long long>(returned - abortAt.load()));
    if (abortRc.load() != strataSuccess) err += Format("strataCommAbort returned %d; ", abortRc.load());
    if (abortReturned.load() - abortAt.load() > 1000)
      err += Format("strataCommAbort took %lld ms; ", static_cast<long long>(abortReturned.load() - abortAt.load()));
    return err;
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

}  // namespace
}  // namespace test
}  // namespace strata
