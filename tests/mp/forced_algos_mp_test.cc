// Every algorithm forced (through strataConfig_t.algorithm on a split communicator) on every
// collective it serves, at 4 ranks over shared memory, TCP, and two fake hosts of 2 ranks (where the
// hierarchical plans run for real), checked against values computed here and against the name
// strataCommGetLastAlgorithm reports.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mp/mp_harness.h"

namespace strata {
namespace test {
namespace {

enum Coll { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kAlltoAll };
const char* const kCollKeys[] = {"allreduce", "broadcast", "reduce", "allgather", "reducescatter", "alltoall"};

struct Forced {
  const char* name;
  std::vector<Coll> colls;
};
const Forced kForced[] = {
    {"ring", {kAllReduce, kAllGather, kReduceScatter}},
    {"chain", {kBroadcast, kReduce}},
    {"direct", {kAllReduce}},
    {"tree", {kAllReduce, kBroadcast, kReduce}},
    {"rd", {kAllReduce, kAllGather, kReduceScatter}},
    {"rhd", {kAllReduce, kAllGather, kReduceScatter}},
    {"hier", {kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce}},
    {"hier_leader", {kAllReduce}},
    {"pairwise", {kAlltoAll}},
    {"oneshot", {kAllReduce, kAllGather, kReduceScatter}},
    {"twoshot", {kAllReduce, kAllGather, kReduceScatter}},
};
// 3000 floats reach cross-memory attach's size (8 KiB) within the window; the last is over one FIFO (1 MiB of float).
const size_t kCounts[] = {0, 1, 7, 1000, 3000, 300001};

float In(int rank, size_t i) { return static_cast<float>(static_cast<int>((rank * 7 + i * 13) % 11) - 5); }

// What the call must leave in rank r's output element i.
double Want(Coll c, int n, int r, int root, size_t count, size_t i, bool avg) {
  auto reduced = [&](size_t idx) {
    double s = 0;
    for (int q = 0; q < n; ++q) s += In(q, idx);
    return avg ? s / n : s;
  };
  switch (c) {
    case kAllReduce:
    case kReduce: return reduced(i);
    case kBroadcast: return In(root, i);
    case kAllGather: return In(static_cast<int>(i / count), i % count);
    case kReduceScatter: return reduced(r * count + i);
    case kAlltoAll: return In(static_cast<int>(i / count), r * count + i % count);
  }
  return 0;
}

// The name the plan reports: hierarchical plans fall back to the flat ones on one host, direct to the
// ring above one FIFO, and one rank runs a local copy.
// One- and two-shot need peer-mapped windows (shared memory among all ranks; 1 MiB by default) that hold
// the input (and, for two-shot allreduce, the reduced parts), else direct or ring run. Where the ranks reach
// each other's memory (`cma`), they copy in place from 8 KiB of the whole vector or beyond the window (not the
// allreduce's oneshot).
std::string WantName(const std::string& forced, Coll c, size_t count, bool twoHosts, bool tcp, int n, bool cma) {
  const size_t fifoBytes = (size_t{128} << 10) * 8, windowBytes = size_t{1} << 20;
  if ((forced == "hier" || forced == "hier_leader") && !twoHosts)
    return c == kBroadcast || c == kReduce ? "chain" : "ring";
  if (forced == "direct" && count * sizeof(float) > fifoBytes) return "ring";
  if (forced == "oneshot" || forced == "twoshot") {
    // Reduce-scatter publishes all n blocks, allgather and allreduce their own buffer.
    size_t need = (c == kReduceScatter ? count * n : count) * sizeof(float);
    if (forced == "twoshot" && c == kAllReduce) need *= 2;
    const size_t whole = (c == kAllReduce ? count : count * n) * sizeof(float);
    const bool inPlace = cma && !twoHosts && !tcp && !(forced == "oneshot" && c == kAllReduce) && count > 0 &&
                         (whole >= 8192 || need > windowBytes);
    if (inPlace) return forced;
    if (twoHosts || tcp || need > windowBytes) {
      if (c != kAllReduce) return "ring";
      return count * sizeof(float) <= fifoBytes ? "direct" : "ring";
    }
  }
  return forced;
}

std::string RunOne(strataComm_t comm, int r, int n, Coll c, size_t count, bool avg, const std::string& forced,
                   bool twoHosts, bool tcp, bool cma) {
  const int root = 1;
  const strataRedOp_t op = avg ? strataAvg : strataSum;
  const size_t sendN = c == kReduceScatter || c == kAlltoAll ? count * n : count;
  const size_t recvN = c == kAllGather || c == kAlltoAll ? count * n : count;
  std::vector<float> send(sendN + 1), recv(recvN + 1, -999.0f);
  for (size_t i = 0; i < sendN; ++i) send[i] = In(r, i);
  strataResult_t rc = strataSuccess;
  switch (c) {
    case kAllReduce: rc = strataAllReduce(send.data(), recv.data(), count, strataFloat32, op, comm, nullptr); break;
    case kBroadcast: rc = strataBroadcast(send.data(), recv.data(), count, strataFloat32, root, comm, nullptr); break;
    case kReduce: rc = strataReduce(send.data(), recv.data(), count, strataFloat32, op, root, comm, nullptr); break;
    case kAllGather: rc = strataAllGather(send.data(), recv.data(), count, strataFloat32, comm, nullptr); break;
    case kReduceScatter:
      rc = strataReduceScatter(send.data(), recv.data(), count, strataFloat32, op, comm, nullptr);
      break;
    case kAlltoAll: rc = strataAlltoAll(send.data(), recv.data(), count, strataFloat32, comm, nullptr); break;
  }
  const std::string what = forced + " " + kCollKeys[c] + " count " + std::to_string(count) + (avg ? " avg" : "");
  if (rc != strataSuccess) return what + ": " + strataGetLastError(comm);
  const char* ran = nullptr;
  if (strataCommGetLastAlgorithm(comm, &ran) != strataSuccess) return what + ": no algorithm name";
  const std::string want = WantName(forced, c, count, twoHosts, tcp, n, cma);
  if (ran != want) return what + ": ran " + ran + ", expected " + want;
  if (c == kReduce && r != root) return "";
  for (size_t i = 0; i < recvN; ++i) {
    const double w = Want(c, n, r, root, count, i, avg);
    if (std::fabs(recv[i] - w) > 1e-6)
      return what + ": element " + std::to_string(i) + " is " + std::to_string(recv[i]) + ", expected " +
             std::to_string(w);
  }
  return "";
}

void RunAll(bool tcp, int nodes, bool cmaOff = false) {
  MpOptions o;
  o.nranks = 4;
  o.tcp = tcp;
  o.nodes = nodes;
  o.timeoutSec = 120;
  if (cmaOff) o.beforeInit = [](int) { setenv("STRATA_CMA", "0", 1); };
  const bool cma = !cmaOff && CrossMemoryAttachWorks();
  MpResult res = RunRanks(o, [&](int r, int n, strataComm_t comm) -> std::string {
    for (const Forced& f : kForced) {
      for (Coll c : f.colls) {
        // One communicator per forced entry, as an application would configure it.
        strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
        const std::string spec = std::string(kCollKeys[c]) + ":" + f.name;
        cfg.algorithm = spec.c_str();
        cfg.shmDisable = tcp ? 1 : 0;
        cfg.timeoutMs = 30000;
        strataComm_t sub = nullptr;
        if (strataCommSplit(comm, 0, r, &sub, &cfg) != strataSuccess)
          return spec + ": split failed: " + strataGetLastError(comm);
        std::string err;
        for (size_t count : kCounts)
          for (bool avg : {false, true}) {
            if (avg && (c == kBroadcast || c == kAllGather || c == kAlltoAll)) continue;
            if (err.empty()) err = RunOne(sub, r, n, c, count, avg, f.name, nodes == 2, tcp, cma);
          }
        if (strataCommDestroy(sub) != strataSuccess && err.empty()) err = spec + ": destroy failed";
        if (!err.empty()) return err;
      }
    }
    return "";
  });
  EXPECT_TRUE(res.ok()) << res.summary();
}

TEST(ForcedAlgorithms, SharedMemory) { RunAll(false, 1); }
// STRATA_CMA=0: one- and two-shot go through the window up to its size, and fall back beyond it.
TEST(ForcedAlgorithms, SharedMemoryWithoutCrossMemoryAttach) { RunAll(false, 1, true); }
TEST(ForcedAlgorithms, Tcp) { RunAll(true, 1); }
TEST(ForcedAlgorithms, TwoHosts) { RunAll(false, 2); }

// Runs `body` on `nranks` ranks, each on a communicator split off that runs the allreduce's twoshot and the others'
// oneshot, destroyed after it; the body returns "" or what went wrong.
MpResult RunOnTheWindowAlgorithms(int nranks, const std::function<std::string(int, int, strataComm_t)>& body) {
  MpOptions o;
  o.nranks = nranks;
  o.timeoutSec = 120;
  return RunRanks(o, [&](int r, int n, strataComm_t comm) -> std::string {
    strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
    cfg.algorithm = "allreduce:twoshot;allgather:oneshot;reducescatter:oneshot";
    strataComm_t sub = nullptr;
    if (strataCommSplit(comm, 0, r, &sub, &cfg) != strataSuccess)
      return std::string("split: ") + strataGetLastError(comm);
    std::string err = body(r, n, sub);
    if (strataCommDestroy(sub) != strataSuccess && err.empty()) err = "destroy failed";
    return err;
  });
}

// Peer-mapped windows are reused call after call (two halves in turn): hundreds of back-to-back one-
// and two-shot calls with inputs that change every call must never read a peer's next or previous
// call's data. Ranks run at different speeds (rank 0 sleeps now and then) to shake the timing.
TEST(ForcedAlgorithms, WindowsReusedCallAfterCall) {
  MpResult res = RunOnTheWindowAlgorithms(4, [&](int r, int n, strataComm_t sub) -> std::string {
    std::string err;
    const size_t count = 1001;
    std::vector<float> send(count * n), recv(count * n);
    for (int call = 0; call < 600 && err.empty(); ++call) {
      if (r == 0 && call % 97 == 0) usleep(2000);
      const Coll c = call % 3 == 0 ? kAllReduce : call % 3 == 1 ? kAllGather : kReduceScatter;
      const size_t sendN = c == kReduceScatter ? count * n : count;
      for (size_t i = 0; i < sendN; ++i)
        send[i] = static_cast<float>((r + 1) * 1000 + call * 7 + static_cast<int>(i % 5));
      strataResult_t rc;
      if (c == kAllReduce)
        rc = strataAllReduce(send.data(), recv.data(), count, strataFloat32, strataSum, sub, nullptr);
      else if (c == kAllGather)
        rc = strataAllGather(send.data(), recv.data(), count, strataFloat32, sub, nullptr);
      else
        rc = strataReduceScatter(send.data(), recv.data(), count, strataFloat32, strataSum, sub, nullptr);
      if (rc != strataSuccess) {
        err = "call " + std::to_string(call) + ": " + strataGetLastError(sub);
        break;
      }
      const size_t recvN = c == kAllGather ? count * n : count;
      for (size_t i = 0; i < recvN && err.empty(); ++i) {
        double want = 0;
        if (c == kAllGather) {
          want = (static_cast<int>(i / count) + 1) * 1000 + call * 7 + static_cast<int>((i % count) % 5);
        } else {
          const size_t idx = c == kReduceScatter ? r * count + i : i;
          for (int q = 0; q < n; ++q) want += (q + 1) * 1000 + call * 7 + static_cast<int>(idx % 5);
        }
        if (recv[i] != want)
          err = "call " + std::to_string(call) + " (" + kCollKeys[c] + "): element " + std::to_string(i) + " is " +
                std::to_string(recv[i]) + ", expected " + std::to_string(want);
      }
    }
    return err;
  });
  EXPECT_TRUE(res.ok()) << res.summary();
}

// In place by cross-memory attach, call after call: each call publishes its own buffers (two sets used in turn, every
// other call in place), its inputs change every call, and the ranks run at different speeds. A rank must never read a
// peer's buffer of another call, nor return before its peers have written their parts into its output. Three ranks,
// so that the parts are uneven; counts from 8 KiB to over a piece (256 KiB) and over the window.
TEST(ForcedAlgorithms, CrossMemoryAttachCallAfterCall) {
  if (!CrossMemoryAttachWorks()) GTEST_SKIP() << "process_vm_readv/writev between processes is refused here";
  MpResult res = RunOnTheWindowAlgorithms(3, [&](int r, int n, strataComm_t sub) -> std::string {
    std::string err;
    const size_t counts[] = {2049, 70001, 300001};
    const size_t most = 300001 * n;
    std::vector<float> sets[2][2] = {{std::vector<float>(most), std::vector<float>(most)},
                                     {std::vector<float>(most), std::vector<float>(most)}};
    for (int call = 0; call < 90 && err.empty(); ++call) {
      if (r == 0 && call % 7 == 0) usleep(3000);
      const FamilyColl c = static_cast<FamilyColl>(call % 3);
      const size_t count = counts[(call / 3) % 3];
      const bool inPlace = (call / 9) % 2 == 1;
      auto in = [&](int q, size_t i) {
        return static_cast<float>((q + 1) * 1000 + call * 7 + static_cast<int>(i % 5));
      };
      const std::string what = "call " + std::to_string(call) + " (" + FamilyCollName(c) + ", " +
                               std::to_string(count) + (inPlace ? ", in place" : "") + ")";
      std::string ran;
      err = RunAndCheckFamilyCall(c, sub, r, n, count, inPlace, sets[call % 2][0].data(), sets[call % 2][1].data(), in,
                                  what, &ran);
      if (err.empty() && ran != (c == FamilyColl::kAllReduce ? "twoshot" : "oneshot")) err = what + ": ran " + ran;
    }
    return err;
  });
  EXPECT_TRUE(res.ok()) << res.summary();
}

// The most resident memory this process has held, in bytes.
int64_t PeakResidentBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

// A communicator caches a plan per call shape, up to hundreds of them. The in-place allreduce's plans land pieces of
// the peers' buffers (256 KiB each) somewhere to reduce them: one such piece per plan made 160 distinct counts cost
// 40 MiB of resident memory. Every result is checked, and the peak resident memory the 160 plans add must stay under
// 8 MiB.
TEST(ForcedAlgorithms, CrossMemoryAttachPlansShareTheirPieceBuffer) {
  if (!CrossMemoryAttachWorks()) GTEST_SKIP() << "process_vm_readv/writev between processes is refused here";
  MpResult res = RunOnTheWindowAlgorithms(2, [&](int r, int n, strataComm_t sub) -> std::string {
    std::string err;
    const size_t first = 70001, step = 1001, calls = 160;
    std::vector<float> a(first + step * calls), b(a.size());
    auto in = [](int q, size_t i) { return static_cast<float>((q + 1) * 100 + static_cast<int>(i % 7)); };
    int64_t before = 0;
    for (size_t k = 0; k < calls && err.empty(); ++k) {
      const size_t count = first + step * k;
      std::string ran;
      err = RunAndCheckFamilyCall(FamilyColl::kAllReduce, sub, r, n, count, false, a.data(), b.data(), in,
                                  "count " + std::to_string(count), &ran);
      if (err.empty() && ran != "twoshot") err = "count " + std::to_string(count) + ": ran " + ran;
      if (k == 0) before = PeakResidentBytes();  // the buffers and the first plan in place
    }
    const int64_t grew = PeakResidentBytes() - before;
    if (err.empty() && grew > (8 << 20))
      err = std::to_string(calls - 1) + " more plans added " + std::to_string(grew >> 10) + " KiB of resident memory";
    return err;
  });
  EXPECT_TRUE(res.ok()) << res.summary();
}

// A forced algorithm that does not serve the collective is refused when the communicator is made,
// before any connection, with the reason.
TEST(ForcedAlgorithms, UnservedPairIsRefusedAtInit) {
  strataUniqueId id;
  ASSERT_EQ(strataGetUniqueId(&id), strataSuccess);
  strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
  cfg.algorithm = "allgather:tree";
  strataComm_t comm = nullptr;
  EXPECT_EQ(strataCommInitRankConfig(&comm, 2, id, 0, &cfg), strataInvalidArgument);
  EXPECT_NE(std::string(strataGetLastError(nullptr)).find("'tree' does not serve allgather"), std::string::npos)
      << strataGetLastError(nullptr);
}

}  // namespace
}  // namespace test
}  // namespace strata
