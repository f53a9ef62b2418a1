// What the executor drives: one started execution of a plan (exact or quantized) on one rank, advanced
// without ever blocking. The executor (executor.h) owns the waiting: spinning, sleeping, the timeout,
// abort and dead peers.
#pragma once

#include <poll.h>

#include <string>
#include <vector>

#include "core/status.h"

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

}  // namespace strata
