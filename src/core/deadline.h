// A point in time after which a wait gives up; every wait in strata takes one.
#pragma once

#include <chrono>
#include <cstdint>

namespace strata {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  static Deadline After(int64_t ms) { return Deadline(Clock::now() + std::chrono::milliseconds(ms)); }
  static Deadline Never() { return Deadline(Clock::time_point::max()); }

  bool expired() const { return Clock::now() >= at_; }
  // Milliseconds left, clamped to [0, cap]; for poll() and futex timeouts.
  int remainingMs(int cap) const {
    if (at_ == Clock::time_point::max()) return cap;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
    if (left < 0) return 0;
    return left > cap ? cap : static_cast<int>(left);
  }

 private:
  explicit Deadline(Clock::time_point at) : at_(at) {}
  Clock::time_point at_;
};

inline uint64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Deadline::Clock::now().time_since_epoch()).count();
}

}  // namespace strata
