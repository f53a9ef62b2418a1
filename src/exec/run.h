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
  // Adds the descriptors to poll while blocked; true when it added any.
  virtual bool pollFds(std::vector<pollfd>* fds) = 0;
  // "receive from rank 3 (channel 0), ...": what the unfinished queues wait for.
  virtual std::string blockedOn() const = 0;
  virtual std::vector<int> blockedPeers() const = 0;
};

// Pieces both runs share.
// Adds every connection's descriptors; true when it added any.
bool PollConnections(const std::vector<RecvConnection*>& recv, const std::vector<SendConnection*>& send,
                     std::vector<pollfd>* fds);
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
