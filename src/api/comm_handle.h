// The handle behind strataComm_t and the checks every entry point makes on it.
//
// A handle outlives its communicator: destroy and abort free the Communicator but keep the handle as
// a tombstone, so that a later call on it gets a clear error rather than a use-after-free.
#pragma once

#include <atomic>
#include <memory>

#include "core/communicator.h"
#include "core/status.h"

struct strataComm {
  enum State : int { kLive = 0, kClosing = 1, kDestroyed = 2, kAborted = 3 };
  std::atomic<int> state{kLive};
  std::atomic<int> activeCalls{0};
  std::atomic<bool> moving{false};  // a thread is in a call that moves data on it
  int creator = 0;                  // the process that made it (a child after fork may not use it)
  std::unique_ptr<strata::Communicator> impl;
};

namespace strata {

// Records a new handle (every handle ever made stays known to the registry).
strataComm* NewCommHandle(std::unique_ptr<Communicator> impl);

// Holds a live communicator for the duration of one API call. A call that moves data (`kMovesData`: a collective,
// send or receive outside a group, a group's end, a split) also holds it against such calls from other threads: a
// communicator runs one at a time, and a second thread's call fails at once with strataInvalidUsage instead of
// interleaving its messages with the first's. Queries (count, rank, errors) and abort go through at any time. Such a
// call, destroy and abort are refused in a process forked from the one that made the communicator: the child shares
// its parent's sockets and shared memory, and would take the parent's messages or mark the parent departed.
class CommGuard {
 public:
  enum Use { kQuery, kMovesData };
  explicit CommGuard(strataComm* comm, Use use = kQuery);
  ~CommGuard();
  const Status& status() const { return status_; }
  Communicator& operator*() const { return *comm_->impl; }
  Communicator* operator->() const { return comm_->impl.get(); }

 private:
  strataComm* comm_ = nullptr;
  bool entered_ = false;
  bool moving_ = false;  // holds comm_->moving
  Status status_;
};

// Ends a communicator: marks the handle, optionally aborts blocked calls, waits for calls in
// flight to leave, then frees it.
Status CloseComm(strataComm* comm, bool abort);

// Turns a Status into the C result, recording the message for strataGetLastError().
strataResult_t ReturnStatus(const Status& st);

}  // namespace strata
