// The host executor: runs a plan on the calling thread until it completes, waiting between rounds
// of progress with a bounded spin, then yields, then sleeps (on the shared-memory doorbell or on
// the sockets), so that more ranks than cores still make progress.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "algorithms/plan.h"
#include "core/deadline.h"
#include "core/status.h"
#include "transport/connection.h"
#include "transport/shm/doorbell.h"

namespace strata {

// Which peers are known to have died; implemented by the communicator's PeerMonitor.
class PeerLiveness {
 public:
  virtual ~PeerLiveness() = default;
  virtual std::vector<int> deadRanks() const = 0;  // ascending
  // "rank 2 (pid 99) died" for each, joined with ", ".
  virtual std::string describe(const std::vector<int>& dead) const = 0;
};

struct WaitPolicy {
  Doorbell* doorbell = nullptr;             // this rank's, when it has shared-memory peers
  const std::atomic<bool>* abort = nullptr;  // set by strataCommAbort
  int spinUs = 50;
  int yieldUs = 2000;  // after spinning, yield this long before sleeping
  int64_t timeoutMs = 300000;
  // Asked every peerCheckMs while the run waits, and when a connection fails. A dead peer the run
  // waits for fails it at once; any other dead peer fails it after deadStallMs without progress
  // (the wait is then most likely on a survivor that waits for the dead one).
  const PeerLiveness* liveness = nullptr;
  int peerCheckMs = 100;
  int deadStallMs = 1000;
};

class Run;

// Runs a started run (PlanRun, QuantPlanRun) to completion. Errors: strataTimeout (message names the peers waited
// for), strataCommAborted, strataRemoteError naming a dead peer, or whatever a connection reported.
Status ExecuteRun(Run& run, const WaitPolicy& wait);

// Same for a plan used once: resolves its connections, binds the buffers and runs it.
Status ExecutePlan(const Plan& plan, void* const* buffers, ConnectionTable* conns, const WaitPolicy& wait);

}  // namespace strata
