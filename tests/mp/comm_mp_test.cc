// Communicator life cycle with real processes: split, init from the launcher's environment, several
// communicators at once, create/destroy without leaks, barrier, and mismatched calls that must fail (not hang).
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mp/mp_harness.h"

namespace strata {
namespace test {
namespace {

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

// "call returned N (name): last error" for a failed call.
std::string Failed(const char* call, strataResult_t rc) {
  return Format("%s returned %d (%s): %s", call, static_cast<int>(rc), strataGetErrorString(rc),
                strataGetLastError(nullptr));
}

int64_t MonotonicNs() {  // CLOCK_MONOTONIC is one clock for every process of the machine
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int CountOpenFds() {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;  // includes the directory's own descriptor, the same every time
}

// Mappings of strata shared-memory segments in this process (unlinked ones show as "(deleted)").
int CountStrataMappings() {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) n += line.find("/strata-") != std::string::npos;
  return n;
}

// /dev/shm entries of segments this process created (their names start with strata-<pid>-).
std::vector<std::string> OwnShmEntries() {
  std::vector<std::string> found;
  const std::string prefix = "strata-" + std::to_string(getpid()) + "-";
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d))
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) found.push_back(e->d_name);
    closedir(d);
  }
  return found;
}

int FreeTcpPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = -1;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

// A unique id made by rank 0 and broadcast over `comm`.
strataResult_t ShareUniqueId(strataComm_t comm, int rank, strataUniqueId* id) {
  if (rank == 0) {
    const strataResult_t rc = strataGetUniqueId(id);
    if (rc != strataSuccess) return rc;
  }
  return strataBroadcast(id, id, sizeof(*id), strataUint8, 0, comm, nullptr);
}

// Checks size and rank of `comm`, then that an allreduce over it sums `contribution` to `want`.
std::string CheckComm(strataComm_t comm, int wantSize, int wantRank, int32_t contribution, int32_t want) {
  int size = -1, rank = -1;
  strataResult_t rc = strataCommCount(comm, &size);
  if (rc != strataSuccess) return Failed("strataCommCount", rc);
  rc = strataCommUserRank(comm, &rank);
  if (rc != strataSuccess) return Failed("strataCommUserRank", rc);
  if (size != wantSize || rank != wantRank)
    return Format("communicator has size %d and rank %d, want size %d and rank %d", size, rank, wantSize, wantRank);
  int32_t sum = 0;
  rc = strataAllReduce(&contribution, &sum, 1, strataInt32, strataSum, comm, nullptr);
  if (rc != strataSuccess) return Failed("strataAllReduce", rc);
  if (sum != want) return Format("allreduce gave %d, want %d", sum, want);
  return "";
}

// ---- split ----

TEST(CommSplit, ParityColorsWithReversedKeys) {
  MpOptions o;
  o.nranks = 5;  // uneven halves: {0, 2, 4} and {1, 3}
  const MpResult r = RunRanks(o, [](int rank, int n, strataComm_t comm) -> std::string {
    const int color = rank % 2;
    strataComm_t sub = nullptr;
    strataResult_t rc = strataCommSplit(comm, color, n - rank, &sub, nullptr);
    if (rc != strataSuccess) return Failed("strataCommSplit", rc);
    if (sub == nullptr) return "strataCommSplit gave NULL for a real color";
    // Keys ascend as ranks descend: the new comm lists the same-parity ranks from the highest down.
    std::vector<int32_t> members;
    int32_t want = 0;
    for (int q = n - 1; q >= 0; --q) {
      if (q % 2 != color) continue;
      members.push_back(q);
      want += q + 1;
    }
    const int newRank = static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin());
    std::string err = CheckComm(sub, static_cast<int>(members.size()), newRank, rank + 1, want);
    if (err.empty()) {
      const int32_t me = rank;
      std::vector<int32_t> order(members.size(), -1);
      rc = strataAllGather(&me, order.data(), 1, strataInt32, sub, nullptr);
      if (rc != strataSuccess)
        err = Failed("strataAllGather on the split communicator", rc);
      else if (order != members)
        err = "the split communicator orders its ranks other than by key";
    }
    rc = strataCommDestroy(sub);
    if (!err.empty()) return "color " + std::to_string(color) + ": " + err;
    if (rc != strataSuccess) return Failed("strataCommDestroy", rc);

    // Rank 0 opts out: it gets NULL, the others a communicator of n - 1 ranks.
    strataComm_t rest = comm;  // not NULL, so that the test sees the call set it
    rc = strataCommSplit(comm, rank == 0 ? STRATA_SPLIT_NOCOLOR : 7, rank, &rest, nullptr);
    if (rc != strataSuccess) return Failed("strataCommSplit with STRATA_SPLIT_NOCOLOR on rank 0", rc);
    if (rank == 0) return rest == nullptr ? "" : "STRATA_SPLIT_NOCOLOR did not give a NULL communicator";
    if (rest == nullptr) return "a rank with a color got NULL when rank 0 passed STRATA_SPLIT_NOCOLOR";
    err = CheckComm(rest, n - 1, rank - 1, rank, n * (n - 1) / 2);
    rc = strataCommDestroy(rest);
    if (!err.empty()) return "after NOCOLOR: " + err;
    return rc == strataSuccess ? "" : Failed("strataCommDestroy", rc);
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

// ---- init from the environment ----

TEST(CommInitFromEnv, StrataVariables) {
  const int port = FreeTcpPort();
  ASSERT_GT(port, 0);
  std::mt19937_64 rng(std::random_device{}());
  const std::string secret =
      Format("%016llx%016llx", static_cast<unsigned long long>(rng()), static_cast<unsigned long long>(rng()));
  MpOptions o;
  o.nranks = 3;
  const MpResult r = RunProcesses(o, [&](int rank, int n, strataComm_t) -> std::string {
    setenv("STRATA_RANK", std::to_string(rank).c_str(), 1);
    setenv("STRATA_NRANKS", std::to_string(n).c_str(), 1);
    setenv("STRATA_ROOT_ADDR", ("127.0.0.1:" + std::to_string(port)).c_str(), 1);
    setenv("STRATA_SECRET", secret.c_str(), 1);
    strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
    cfg.timeoutMs = 30000;
    strataComm_t comm = nullptr;
    strataResult_t rc = strataCommInitFromEnv(&comm, &cfg);
    if (rc != strataSuccess) return Failed("strataCommInitFromEnv", rc);
    const std::string err = CheckComm(comm, n, rank, rank + 1, n * (n + 1) / 2);
    rc = strataCommDestroy(comm);
    if (!err.empty()) return err;
    return rc == strataSuccess ? "" : Failed("strataCommDestroy", rc);
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

// ---- several communicators ----

TEST(CommMany, ThreeCommunicatorsInterleaved) {
  // Two more communicators over the same processes; B numbers the ranks differently (rank r is B's (r+1) % n). Their
  // ids come from rank 0 over the base communicator: made in the test's process before the ranks are forked, their
  // root threads would wait there for the ranks, and the harness waits for a process of one thread before it forks.
  MpOptions o;
  o.nranks = 3;
  const MpResult r = RunRanks(o, [&](int rank, int n, strataComm_t base) -> std::string {
    strataUniqueId idA{}, idB{};
    strataResult_t rc = ShareUniqueId(base, rank, &idA);
    if (rc == strataSuccess) rc = ShareUniqueId(base, rank, &idB);  // B's root runs in its rank 2
    if (rc != strataSuccess) return Failed("sharing the unique ids", rc);
    strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
    cfg.timeoutMs = 30000;
    const int rankB = (rank + 1) % n;
    strataComm_t a = nullptr, b = nullptr;
    rc = strataCommInitRankConfig(&a, n, idA, rank, &cfg);
    if (rc != strataSuccess) return Failed("strataCommInitRankConfig (A)", rc);
    rc = strataCommInitRankConfig(&b, n, idB, rankB, &cfg);
    if (rc != strataSuccess) return Failed("strataCommInitRankConfig (B)", rc);
    std::string err;
    for (int it = 0; it < 10 && err.empty(); ++it) {
      // Different data on each, so that a message delivered to the wrong communicator shows.
      const struct {
        const char* name;
        strataComm_t comm;
        int rank;
        int32_t scale;
      } comms[] = {{"base", base, rank, 1}, {"B", b, rankB, 1000}, {"A", a, rank, 100000}};
      for (const auto& c : comms) {
        const int32_t mine = c.scale * (c.rank + 1) + it;
        const int32_t want = c.scale * n * (n + 1) / 2 + n * it;
        const std::string e = CheckComm(c.comm, n, c.rank, mine, want);
        if (!e.empty()) {
          err = std::string(c.name) + ", round " + std::to_string(it) + ": " + e;
          break;
        }
      }
    }
    if (err.empty()) {
      const int32_t me = rank;
      std::vector<int32_t> old(n, -1);
      rc = strataAllGather(&me, old.data(), 1, strataInt32, b, nullptr);
      if (rc != strataSuccess) err = Failed("strataAllGather (B)", rc);
      for (int q = 0; q < n && err.empty(); ++q)
        if (old[q] != (q - 1 + n) % n) err = Format("B's rank %d is base rank %d, want %d", q, old[q], (q - 1 + n) % n);
    }
    // Destroyed in another order than made.
    const strataResult_t rcB = strataCommDestroy(b), rcA = strataCommDestroy(a);
    if (!err.empty()) return err;
    if (rcB != strataSuccess) return Failed("strataCommDestroy (B)", rcB);
    return rcA == strataSuccess ? "" : Failed("strataCommDestroy (A)", rcA);
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

// Each communicator driven by a thread of its own, all at once, as a framework's process groups each run their
// operations on a worker thread: allreduces from 1 element to 3 MiB (the shared-memory FIFO's and the large path),
// a group of sends and receives around a ring and an allgather of the ranks, every element checked. The three
// communicators number the ranks differently, and each gives the data a scale of its own, so that a message taken
// by the wrong one shows.
std::string DriveFromThread(strataComm_t comm, int scale, int rounds) {
  int n = 0, rank = 0;
  strataCommCount(comm, &n);
  strataCommUserRank(comm, &rank);
  for (int round = 0; round < rounds; ++round) {
    for (const size_t count : {size_t{1}, size_t{1000}, size_t{65536}, size_t{3} << 18}) {
      std::vector<int32_t> in(count), out(count, -1);
      for (size_t i = 0; i < count; ++i) in[i] = scale * (rank + 1) + static_cast<int32_t>(i % 17) + round;
      strataResult_t rc = strataAllReduce(in.data(), out.data(), count, strataInt32, strataSum, comm, nullptr);
      if (rc != strataSuccess) return Failed("strataAllReduce", rc);
      for (size_t i = 0; i < count; ++i) {
        const int32_t want = scale * n * (n + 1) / 2 + n * (static_cast<int32_t>(i % 17) + round);
        if (out[i] != want) return Format("allreduce of %zu: [%zu] = %d, want %d", count, i, out[i], want);
      }
      // Each rank sends its input to the next and receives the previous rank's.
      const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
      std::vector<int32_t> got(count, -1);
      strataGroupStart();
      strataSend(in.data(), count, strataInt32, next, comm, nullptr);
      strataRecv(got.data(), count, strataInt32, prev, comm, nullptr);
      rc = strataGroupEnd();
      if (rc != strataSuccess) return Failed("strataGroupEnd (send/recv)", rc);
      for (size_t i = 0; i < count; ++i) {
        const int32_t want = scale * (prev + 1) + static_cast<int32_t>(i % 17) + round;
        if (got[i] != want) return Format("receive of %zu from %d: [%zu] = %d, want %d", count, prev, i, got[i], want);
      }
    }
    const int32_t me = scale + rank;
    std::vector<int32_t> all(n, -1);
    const strataResult_t rc = strataAllGather(&me, all.data(), 1, strataInt32, comm, nullptr);
    if (rc != strataSuccess) return Failed("strataAllGather", rc);
    for (int q = 0; q < n; ++q)
      if (all[q] != scale + q) return Format("allgather: [%d] = %d, want %d", q, all[q], scale + q);
  }
  return "";
}

TEST(CommMany, CommunicatorsDrivenFromThreadsAtOnce) {
  MpOptions o;
  o.nranks = 3;
  const MpResult r = RunRanks(o, [&](int rank, int n, strataComm_t base) -> std::string {
    strataComm_t a = nullptr, b = nullptr;
    strataResult_t rc = strataCommSplit(base, 0, rank, &a, nullptr);
    if (rc != strataSuccess) return Failed("strataCommSplit (A)", rc);
    rc = strataCommSplit(base, 0, n - rank, &b, nullptr);  // B numbers the ranks backwards
    if (rc != strataSuccess) return Failed("strataCommSplit (B)", rc);
    std::string errA, errB, errBase;
    std::thread ta([&] { errA = DriveFromThread(a, 1000, 4); });
    std::thread tb([&] { errB = DriveFromThread(b, 100000, 4); });
    errBase = DriveFromThread(base, 1, 4);
    ta.join();
    tb.join();
    const strataResult_t rcA = strataCommDestroy(a), rcB = strataCommDestroy(b);
    if (!errA.empty()) return "A: " + errA;
    if (!errB.empty()) return "B: " + errB;
    if (!errBase.empty()) return "base: " + errBase;
    if (rcA != strataSuccess) return Failed("strataCommDestroy (A)", rcA);
    return rcB == strataSuccess ? "" : Failed("strataCommDestroy (B)", rcB);
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

// ---- create and destroy ----

TEST(CommLifeCycle, CreateDestroyTwentyTimesLeaksNothing) {
  MpOptions o;
  o.nranks = 3;  // more than one rank per host, so that every communicator makes shared-memory segments
  const MpResult r = RunRanks(o, [](int rank, int n, strataComm_t base) -> std::string {
    const int fdsBefore = CountOpenFds(), mapsBefore = CountStrataMappings();
    strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
    cfg.timeoutMs = 30000;
    for (int it = 0; it < 20; ++it) {
      strataUniqueId id;
      strataResult_t rc = ShareUniqueId(base, rank, &id);
      if (rc != strataSuccess) return Format("round %d: ", it) + Failed("sharing a unique id", rc);
      strataComm_t c = nullptr;
      rc = strataCommInitRankConfig(&c, n, id, rank, &cfg);
      if (rc != strataSuccess) return Format("round %d: ", it) + Failed("strataCommInitRankConfig", rc);
      // The mapping check below means something only if communicators map segments at all.
      if (it == 0 && CountStrataMappings() <= mapsBefore)
        return "a 3-rank communicator mapped no /strata- segment: the leak check would prove nothing";
      const std::string err = CheckComm(c, n, rank, rank + 1, n * (n + 1) / 2);
      rc = strataCommDestroy(c);
      if (!err.empty()) return Format("round %d: ", it) + err;
      if (rc != strataSuccess) return Format("round %d: ", it) + Failed("strataCommDestroy", rc);
    }
    // Rank 0's bootstrap root thread closes its sockets just after the last init returns: give it a moment.
    int fdsAfter = CountOpenFds();
    for (int i = 0; i < 100 && fdsAfter != fdsBefore; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      fdsAfter = CountOpenFds();
    }
    std::string err;
    if (fdsAfter != fdsBefore)
      err += Format("%d open descriptors before 20 create/destroy rounds, %d after; ", fdsBefore, fdsAfter);
    const int mapsAfter = CountStrataMappings();
    if (mapsAfter != mapsBefore) err += Format("%d strata mappings before, %d after; ", mapsBefore, mapsAfter);
    for (const std::string& e : OwnShmEntries()) err += "/dev/shm/" + e + " left behind; ";
    return err;
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

// ---- barrier ----

class BarrierTest : public ::testing::TestWithParam<bool> {};

// No rank leaves a barrier before the last one has entered it, whichever rank is late.
TEST_P(BarrierTest, NoRankLeavesBeforeAllEnter) {
  MpOptions o;
  o.nranks = 4;
  o.tcp = GetParam();
  const MpResult r = RunRanks(o, [](int rank, int n, strataComm_t comm) -> std::string {
    for (int late = 0; late < n; ++late) {
      if (rank == late) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      int64_t mine[2];
      mine[0] = MonotonicNs();
      strataResult_t rc = strataBarrier(comm);
      mine[1] = MonotonicNs();
      if (rc != strataSuccess) return Failed("strataBarrier", rc);
      std::vector<int64_t> all(2 * n);
      rc = strataAllGather(mine, all.data(), 2, strataInt64, comm, nullptr);
      if (rc != strataSuccess) return Failed("strataAllGather", rc);
      int64_t lastEnter = 0, firstLeave = INT64_MAX;
      int lastEntered = -1, firstLeft = -1;
      for (int q = 0; q < n; ++q) {
        if (all[2 * q] > lastEnter) lastEnter = all[2 * q], lastEntered = q;
        if (all[2 * q + 1] < firstLeave) firstLeave = all[2 * q + 1], firstLeft = q;
      }
      if (firstLeave < lastEnter)
        return Format("late rank %d: rank %d left the barrier %.3f ms before rank %d entered it", late, firstLeft,
                      (lastEnter - firstLeave) / 1e6, lastEntered);
    }
    for (int i = 0; i < 200; ++i) {
      const strataResult_t rc = strataBarrier(comm);
      if (rc != strataSuccess) return Format("barrier %d of 200: ", i) + Failed("strataBarrier", rc);
    }
    return "";
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

INSTANTIATE_TEST_SUITE_P(Transports, BarrierTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Tcp" : "Shm"; });

// ---- mismatched calls must fail within the timeout ----

constexpr int kShortTimeoutMs = 3000;
// Slack over the communicator timeout for a loaded machine (every wait is bounded by the timeout itself).
constexpr int64_t kSlackMs = 5000;

struct GroupMismatch {
  const char* name;
  size_t sent;      // int32 elements rank 0 sends to rank 1
  size_t expected;  // int32 elements rank 1 receives from rank 0
};

void PrintTo(const GroupMismatch& g, std::ostream* os) { *os << g.name; }

class GroupMismatchTest : public ::testing::TestWithParam<GroupMismatch> {};

// Each rank sends to and receives from the other in one group; only rank 1's receive has the wrong size.
TEST_P(GroupMismatchTest, ReceiverFailsWithinTimeout) {
  const GroupMismatch g = GetParam();
  MpOptions o;
  o.nranks = 2;
  o.commTimeoutMs = kShortTimeoutMs;
  o.timeoutSec = 60;
  const MpResult r = RunRanks(o, [g](int rank, int, strataComm_t comm) -> std::string {
    const int peer = 1 - rank;
    const size_t recvCount = rank == 1 ? g.expected : g.sent;
    std::vector<int32_t> out(g.sent, rank + 1), in(std::max(g.sent, g.expected), 0);
    const int64_t start = MonotonicNs();
    strataResult_t rc = strataGroupStart();
    if (rc == strataSuccess) rc = strataSend(out.data(), g.sent, strataInt32, peer, comm, nullptr);
    if (rc == strataSuccess) rc = strataRecv(in.data(), recvCount, strataInt32, peer, comm, nullptr);
    const strataResult_t end = strataGroupEnd();
    if (rc == strataSuccess) rc = end;
    const int64_t ms = (MonotonicNs() - start) / 1000000;
    if (ms > kShortTimeoutMs + kSlackMs)
      return Format("the group took %lld ms with a %d ms timeout (returned %d)", static_cast<long long>(ms),
                    kShortTimeoutMs, static_cast<int>(rc));
    if (rank == 1 && rc == strataSuccess)
      return Format("receiving %zu elements where %zu were sent succeeded", g.expected, g.sent);
    if (rank == 1 && strataGetLastError(comm)[0] == '\0') return "the error left no message";
    return "";
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

INSTANTIATE_TEST_SUITE_P(Sizes, GroupMismatchTest,
                         ::testing::Values(GroupMismatch{"ExpectsFewer", 1000, 500},
                                           GroupMismatch{"ExpectsMore", 1000, 2000},
                                           GroupMismatch{"ExpectsFewerManySlots", 300000, 150000}),
                         [](const ::testing::TestParamInfo<GroupMismatch>& info) { return info.param.name; });

struct CountMismatch {
  const char* name;
  bool tcp;
  size_t count;      // ranks 0 .. n-2
  size_t lastCount;  // rank n-1
  const char* algo = nullptr;  // STRATA_ALGO for every rank; nullptr: the selector's choice
};

void PrintTo(const CountMismatch& c, std::ostream* os) { *os << c.name; }

class AllReduceCountMismatchTest : public ::testing::TestWithParam<CountMismatch> {};

TEST_P(AllReduceCountMismatchTest, EveryRankFailsWithinTimeout) {
  const CountMismatch c = GetParam();
  MpOptions o;
  o.nranks = 3;
  o.tcp = c.tcp;
  o.commTimeoutMs = kShortTimeoutMs;
  o.timeoutSec = 60;
  if (c.algo) o.beforeInit = [c](int) { setenv("STRATA_ALGO", c.algo, 1); };
  const MpResult r = RunRanks(o, [c](int rank, int n, strataComm_t comm) -> std::string {
    const size_t count = rank == n - 1 ? c.lastCount : c.count;
    std::vector<float> in(count, 1.0f), out(count, 0.0f);
    const int64_t start = MonotonicNs();
    const strataResult_t rc = strataAllReduce(in.data(), out.data(), count, strataFloat32, strataSum, comm, nullptr);
    const int64_t ms = (MonotonicNs() - start) / 1000000;
    if (rc == strataSuccess)
      return Format("AllReduce of %zu elements succeeded while rank %d passed %zu", count, n - 1, c.lastCount);
    if (ms > kShortTimeoutMs + kSlackMs)
      return Format("AllReduce took %lld ms to fail with a %d ms timeout: %s", static_cast<long long>(ms),
                    kShortTimeoutMs, strataGetLastError(comm));
    if (strataGetLastError(comm)[0] == '\0') return "the error left no message";
    return "";
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

INSTANTIATE_TEST_SUITE_P(Sizes, AllReduceCountMismatchTest,
                         ::testing::Values(CountMismatch{"DirectShm", false, 1000, 500},
                                           CountMismatch{"DirectTcp", true, 1000, 500},
                                           CountMismatch{"RingShm", false, 300000, 200000},
                                           CountMismatch{"RingTcp", true, 300000, 200000},
                                           // Peer-mapped windows carry no frames whose sizes could disagree.
                                           CountMismatch{"OneshotShm", false, 1000, 500, "allreduce:oneshot"},
                                           CountMismatch{"TwoshotShm", false, 1000, 500, "allreduce:twoshot"},
                                           CountMismatch{"OneshotShmLarger", false, 500, 1000, "allreduce:oneshot"}),
                         [](const ::testing::TestParamInfo<CountMismatch>& info) { return info.param.name; });

}  // namespace
}  // namespace test
}  // namespace strata
