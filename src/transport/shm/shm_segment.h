// A POSIX shared-memory segment mapped into this process.
#pragma once

#include <cstddef>
#include <string>

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

}  // namespace strata
