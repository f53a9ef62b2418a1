// A POSIX shared-memory segment mapped into this process.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace strata {

class ShmSegment {
 public:
  ShmSegment() = default;
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Creates (exclusively) and maps a zero-filled segment.
  Status create(const std::string& name, size_t bytes);
  // Maps an existing segment of exactly `bytes`.
  Status open(const std::string& name, size_t bytes);
  // Removes the name; the mapping stays valid. Idempotent.
  void unlink();

  void* base() const { return base_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  void* base_ = nullptr;
  size_t size_ = 0;
  bool owner_ = false;
};

// The name of a communicator's segment: "/strata-<pid>-<counter>-<tag>", so that whoever outlives a
// process (its launcher, a test harness) can find what it left behind.
std::string ShmSegmentName(pid_t pid, uint64_t counter, uint64_t tag);
// Unlinks every segment named after `pid` (a process that has exited: one killed between creating its
// segment and the end of init, when the name is unlinked, leaves it behind); returns their names.
std::vector<std::string> RemoveSegmentsOfProcess(pid_t pid);

}  // namespace strata
