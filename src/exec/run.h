// What the executor drives: one started execution of a plan (exact or quantized) on one rank, advanced
// without ever blocking. The executor (executor.h) owns the waiting: spinning, sleeping, the timeout,
// abort and dead peers.
#pragma once

#include <poll.h>

#include <string>
#include <vector>

#include "core/status.h"
#include "transport/connection.h"

namespace strata {

class Run {
 public:
  virtual ~Run() = default;
  // Does whatever work is possible now; *progressed says whether any was.
  virtual Status advance(bool* progressed) = 0;
  virtual bool done() const = 0;
  // Adds the descriptors to poll while blocked: those of the connections the current steps wait to receive
  // on, and of every send connection with data still to push; true when it added any. A run blocked on
  // shared memory only adds none and sleeps on the doorbell, where a peer's ring wakes it.
  virtual bool pollFds(std::vector<pollfd>* fds) = 0;
  // "receive from rank 3 (channel 0), ...": what the unfinished queues wait for.
  virtual std::string blockedOn() const = 0;
  virtual std::vector<int> blockedPeers() const = 0;
};

// Pieces both runs share.
// Adds the descriptors of `recv` (the connections waited on) and of `send`; true when it added any.
bool PollConnections(const std::vector<RecvConnection*>& recv, const std::vector<SendConnection*>& send,
                     std::vector<pollfd>* fds);
// The receive connections the current steps of `queues` (PlanRun's or QuantPlanRun's queue states) wait on;
// a step still waiting for another queue waits on nothing yet.
template <typename QueueStates>
std::vector<RecvConnection*> WaitedRecvs(const QueueStates& queues) {
  std::vector<RecvConnection*> waited;
  for (const auto& q : queues) {
    if (q.step >= q.queue->steps.size()) continue;
    const auto& s = q.queue->steps[q.step];
    if (s.waitQueue >= 0 && queues[s.waitQueue].step < s.waitSteps) continue;
    if (q.recv[q.step]) waited.push_back(q.recv[q.step]);
  }
  return waited;
}
// Moves every send connection's queued data on; *flushed: whether all of it has been delivered.
Status ProgressSends(const std::vector<SendConnection*>& send, bool* progressed, bool* flushed);
// Appends `item` to a ", "-joined list unless it is there already.
void AddDistinct(std::string* list, const std::string& item);
// A run whose steps are all done may still wait for its sends to be delivered: names those peers.
void AddUndelivered(const std::vector<SendConnection*>& send, std::string* list);
void AddUndelivered(const std::vector<SendConnection*>& send, std::vector<int>* peers);
// Sorts and removes duplicates.
std::vector<int> SortedPeers(std::vector<int> peers);

}  // namespace strata
