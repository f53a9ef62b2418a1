// PeerMonitor: which peer processes on this machine have died. A waiting rank asks it while idle,
// so that a killed peer shows up as an error naming it long before the timeout; a watchdog thread
// asks it too and records the death as the communicator's asynchronous error.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/bootstrap.h"
#include "exec/executor.h"

namespace strata {

class PeerMonitor : public PeerLiveness {
 public:
  PeerMonitor() = default;
  ~PeerMonitor();
  PeerMonitor(const PeerMonitor&) = delete;
  PeerMonitor& operator=(const PeerMonitor&) = delete;

  // Watches every peer that runs on this machine in this pid namespace (a pid elsewhere means
  // nothing here). Call once, before any other thread uses the monitor.
  void watch(const std::vector<PeerInfo>& peers, int myRank);
  bool watchesAny() const { return !watched_.empty(); }
  size_t descriptors() const;

  // Ranks whose process has exited (or become a zombie), ascending. Safe from several threads.
  std::vector<int> deadRanks() const override;
  // "rank 2 (pid 1234) died" joined with ", "; "" for an empty list. A rank that said it left first (`departed`)
  // "destroyed its communicator and exited" instead.
  std::string describe(const std::vector<int>& dead) const override;
  // Whether a rank left the communicator of its own accord before its process exited (the shared-memory transport
  // knows for the ranks it reaches). Set once, before any other thread uses the monitor.
  void setDeparted(std::function<bool(int rank)> departed) { departed_ = std::move(departed); }
  bool departed(int rank) const { return departed_ && departed_(rank); }

 private:
  struct Watched {
    int rank;
    int pid;
    int pidfd;  // -1 where pidfd_open is not available: then /proc/<pid>/stat is read
  };
  std::vector<Watched> watched_;
  std::function<bool(int)> departed_;
};

// Identity of this process's pid namespace (the inode of /proc/self/ns/pid), 0 if unknown.
uint64_t PidNamespaceId();

}  // namespace strata
