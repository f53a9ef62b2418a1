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
// The connections of one step on `channel` (peer -1: none, and nullptr), each added once to the run's list of
// connections (`sendConns`, `recvConns`); an error names a peer the table has no connection to.
Status ConnectStep(ConnectionTable* conns, int channel, int sendPeer, int recvPeer,
                   std::vector<SendConnection*>* sendConns, std::vector<RecvConnection*>* recvConns,
                   SendConnection** send, RecvConnection** recv);
// Adds the descriptors of `recv` (the connections waited on) and of `send`; true when it added any.
bool PollConnections(const std::vector<RecvConnection*>& recv, const std::vector<SendConnection*>& send,
                     std::vector<pollfd>* fds);
// Calls visit(queueState, step) for the current step of every unfinished queue of `queues` (PlanRun's or
// QuantPlanRun's queue states) that is not still waiting for another queue: the steps that wait on a peer, or that
// are ready to run.
template <typename QueueStates, typename Visit>
void ForEachCurrentStep(const QueueStates& queues, Visit visit) {
  for (const auto& q : queues) {
    if (q.step >= q.queue->steps.size()) continue;
    const auto& s = q.queue->steps[q.step];
    if (s.waitQueue >= 0 && queues[s.waitQueue].step < s.waitSteps) continue;  // the other queue says why
    visit(q, s);
  }
}
// The receive connections the current steps of `queues` wait on; a step still waiting for another queue waits on
// nothing yet.
template <typename QueueStates>
std::vector<RecvConnection*> WaitedRecvs(const QueueStates& queues) {
  std::vector<RecvConnection*> waited;
  ForEachCurrentStep(queues, [&waited](const auto& q, const auto&) {
    if (q.recv[q.step]) waited.push_back(q.recv[q.step]);
  });
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

// Run::blockedOn for `queues`: "receive from rank 3 (channel 0), send to rank 1 (channel 0)", one entry per current
// step (ForEachCurrentStep); `special(step)` may name a step of its own kind instead (empty: the usual naming). With
// every step done, the deliveries of `send` still pending unless `flushed`.
template <typename QueueStates, typename Special>
std::string BlockedOnSteps(const QueueStates& queues, const std::vector<SendConnection*>& send, bool flushed,
                           Special special) {
  std::string out;
  ForEachCurrentStep(queues, [&out, &special](const auto& q, const auto& s) {
    const std::string own = special(s);
    const std::string ch = " (channel " + std::to_string(q.queue->channel) + ")";
    if (!own.empty())
      AddDistinct(&out, own);
    else if (s.recvPeer >= 0)
      AddDistinct(&out, "receive from rank " + std::to_string(s.recvPeer) + ch);
    else if (s.sendPeer >= 0)
      AddDistinct(&out, "send to rank " + std::to_string(s.sendPeer) + ch);
  });
  if (out.empty() && !flushed) AddUndelivered(send, &out);
  return out;
}
// Run::blockedPeers for `queues`: the peers of the same steps as BlockedOnSteps names (the receiving peer of a step
// that does both), sorted.
template <typename QueueStates>
std::vector<int> BlockedPeersOfSteps(const QueueStates& queues, const std::vector<SendConnection*>& send,
                                     bool flushed) {
  std::vector<int> out;
  ForEachCurrentStep(queues, [&out](const auto&, const auto& s) {
    if (s.recvPeer >= 0)
      out.push_back(s.recvPeer);
    else if (s.sendPeer >= 0)
      out.push_back(s.sendPeer);
  });
  if (out.empty() && !flushed) AddUndelivered(send, &out);
  return SortedPeers(out);
}

}  // namespace strata
