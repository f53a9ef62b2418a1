// A rank's doorbell: one futex word in its shared-memory segment. A rank that has nothing to do
// sleeps on it; a peer that posts or frees a slot for that rank rings it. Ringing costs one load
// unless the owner is asleep.
#pragma once

#include <atomic>
#include <cstdint>

namespace strata {

struct Doorbell {
  alignas(64) std::atomic<uint32_t> seq;
  std::atomic<uint32_t> sleeping;

  // Peer side, after publishing a head or tail.
  void ring();
  // Owner side: announce the intent to sleep and read the sequence to sleep on. The caller then
  // checks its conditions once more and calls sleep(seq) only if nothing is ready.
  uint32_t prepareSleep();
  void sleep(uint32_t seq, int timeoutMs);
  void cancelSleep() { sleeping.store(0, std::memory_order_relaxed); }
};

}  // namespace strata
