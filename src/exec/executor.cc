#include "exec/executor.h"

#include <poll.h>
#include <sched.h>

#include <cerrno>
#include <vector>

#include "exec/plan_run.h"

namespace strata {

namespace {
inline void CpuRelax() { __builtin_ia32_pause(); }
constexpr int kSleepSliceMs = 50;        // sleeps are sliced to notice aborts and deadlines
}  // namespace

Status ExecutePlan(const Plan& plan, void* const* buffers, ConnectionTable* conns, const WaitPolicy& wait) {
  PlanRun run(plan, conns);
  STRATA_CHECK(run.init());
  run.start(buffers);
  return ExecuteRun(run, wait);
}

Status ExecuteRun(PlanRun& run, const WaitPolicy& wait) {
  const Deadline deadline = Deadline::After(wait.timeoutMs);
  const int64_t spinNs = static_cast<int64_t>(wait.spinUs) * 1000;
  const int64_t yieldNs = static_cast<int64_t>(wait.yieldUs) * 1000;
  std::vector<pollfd> fds;
  uint64_t idleSince = 0;
  for (;;) {
    bool progressed = false;
    STRATA_CHECK(run.advance(&progressed));
    if (run.done()) return Status::Ok();
    if (progressed) {
      idleSince = 0;
      continue;
    }
    const uint64_t now = NowNs();
    if (idleSince == 0) idleSince = now;
    const int64_t idle = static_cast<int64_t>(now - idleSince);
    if (idle < spinNs) {
      for (int i = 0; i < 32; ++i) CpuRelax();
      continue;
    }
    if (wait.abort && wait.abort->load(std::memory_order_relaxed))
      return MakeError(strataCommAborted, "the communicator was aborted while waiting for %s",
                       run.blockedOn().c_str());
    if (deadline.expired())
      return MakeError(strataTimeout, "timed out after %lld ms waiting for %s",
                       static_cast<long long>(wait.timeoutMs), run.blockedOn().c_str());
    if (idle < spinNs + yieldNs) {
      sched_yield();
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
      Status st = run.advance(&progressed);
      if (!st.ok() || progressed || run.done()) {
        wait.doorbell->cancelSleep();
        STRATA_CHECK(st);
        continue;
      }
      wait.doorbell->sleep(seq, deadline.remainingMs(kSleepSliceMs));
      continue;
    }
    sched_yield();
  }
}

}  // namespace strata
