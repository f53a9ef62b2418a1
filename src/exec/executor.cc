#include "exec/executor.h"

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "exec/plan_run.h"

namespace strata {

namespace {
inline void CpuRelax() { __builtin_ia32_pause(); }
constexpr int kSleepSliceMs = 50;        // sleeps are sliced to notice aborts and deadlines
constexpr uint64_t kYieldHandOffNs = 200000;  // a yield this long ran someone else: sleep from then on
}  // namespace

Status ExecutePlan(const Plan& plan, void* const* buffers, ConnectionTable* conns, const WaitPolicy& wait) {
  PlanRun run(plan, conns);
  STRATA_CHECK(run.init());
  run.start(buffers);
  return ExecuteRun(run, wait);
}

namespace {
// A failed connection often means a dead peer; say which one, since the peer a rank waits for may
// only be the messenger.
Status WithDeadPeers(Status st, const WaitPolicy& wait) {
  if (st.ok() || !wait.liveness) return st;
  std::vector<int> dead = wait.liveness->deadRanks();
  if (st.code() == strataRemoteError) {
    // A peer that closed its connection may have failed because another one died a moment before,
    // whose exit the kernel has not finished: give that death a moment to show, to name the cause.
    for (int i = 0; i < 10; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::vector<int> now = wait.liveness->deadRanks();
      if (now.size() > dead.size()) dead.swap(now);
    }
  }
  if (dead.empty()) return st;
  return Status(st.code(), st.message() + " (" + wait.liveness->describe(dead) + ")");
}

std::string RankList(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "rank " : ", rank ") + std::to_string(r);
  return out.empty() ? "no peer" : out;
}
}  // namespace

Status ExecuteRun(Run& run, const WaitPolicy& wait) {
  const Deadline deadline = Deadline::After(wait.timeoutMs);
  const int64_t spinNs = static_cast<int64_t>(wait.spinUs) * 1000;
  const int64_t yieldNs = static_cast<int64_t>(wait.yieldUs) * 1000;
  const uint64_t checkNs = static_cast<uint64_t>(wait.peerCheckMs) * 1000000;
  std::vector<pollfd> fds;
  uint64_t idleSince = 0, lastPeerCheck = NowNs();
  bool yieldHandsOff = false;
  for (;;) {
    bool progressed = false;
    Status st = run.advance(&progressed);
    if (!st.ok()) return WithDeadPeers(st, wait);
    if (run.done()) return Status::Ok();
    if (progressed) {
      idleSince = 0;
      yieldHandsOff = false;
      continue;
    }
    const uint64_t now = NowNs();
    if (idleSince == 0) idleSince = now;
    const int64_t idle = static_cast<int64_t>(now - idleSince);
    if (idle < spinNs) {
      CpuRelax();
      continue;
    }
    if (wait.abort && wait.abort->load(std::memory_order_relaxed))
      return MakeError(strataCommAborted, "the communicator was aborted while waiting for %s",
                       run.blockedOn().c_str());
    if (wait.liveness && now - lastPeerCheck >= checkNs) {
      lastPeerCheck = now;
      const std::vector<int> dead = wait.liveness->deadRanks();
      if (!dead.empty()) {
        // Whatever a dead peer wrote before dying is already visible: one more round takes it.
        progressed = false;
        STRATA_CHECK(WithDeadPeers(run.advance(&progressed), wait));
        if (run.done()) return Status::Ok();
        if (progressed) {
          idleSince = 0;
          continue;
        }
        const std::vector<int> waited = run.blockedPeers();
        bool waitsOnDead = false;
        for (int r : waited) waitsOnDead = waitsOnDead || std::binary_search(dead.begin(), dead.end(), r);
        if (waitsOnDead || idle >= static_cast<int64_t>(wait.deadStallMs) * 1000000)
          return MakeError(strataRemoteError, "%s; this rank was waiting for %s", wait.liveness->describe(dead).c_str(),
                           run.blockedOn().c_str());
      }
    }
    if (deadline.expired())
      return WithDeadPeers(MakeError(strataTimeout, "timed out after %lld ms waiting for %s (no answer from %s)",
                                     static_cast<long long>(wait.timeoutMs), run.blockedOn().c_str(),
                                     RankList(run.blockedPeers()).c_str()),
                           wait);
    if (idle < spinNs + yieldNs && !yieldHandsOff) {
      // A yield that returns late gave the core to another thread of the machine (a training step's
      // compute, say): polling at that thread's pace would leave this wait to the scheduler's time slice.
      // Sleep instead: a ring wakes the sleeper at once, and a woken thread preempts.
      const uint64_t before = NowNs();
      sched_yield();
      yieldHandsOff = NowNs() - before > kYieldHandOffNs;
      continue;
    }
    fds.clear();
    if (run.pollFds(&fds)) {
      // Shared-memory peers do not ring while we poll sockets: keep the slice short then.
      const int ms = deadline.remainingMs(wait.doorbell ? 1 : kSleepSliceMs);
      if (poll(fds.data(), fds.size(), ms) < 0 && errno != EINTR) return MakeSysError(errno, "poll");
      continue;
    }
    if (wait.doorbell) {
      uint32_t seq = wait.doorbell->prepareSleep();
      progressed = false;
      st = run.advance(&progressed);
      if (!st.ok() || progressed || run.done()) {
        wait.doorbell->cancelSleep();
        STRATA_CHECK(WithDeadPeers(st, wait));
        continue;
      }
      wait.doorbell->sleep(seq, deadline.remainingMs(kSleepSliceMs));
      continue;
    }
    sched_yield();
  }
}

}  // namespace strata
