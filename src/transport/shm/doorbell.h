// A rank's doorbell: one futex word in its shared-memory segment. A rank that has nothing to do
// sleeps on it; a peer that posts or frees a slot for that rank rings it. Ringing costs one load
// unless the owner is asleep.
//
// Sleeping and ringing must not miss each other: the ringer publishes its slot, then reads the
// owner's `sleeping`; the owner sets `sleeping`, then looks at its slots once more. Each side needs
// its store ordered before its load (a Dekker pair). With `asymmetric` set the owner pays for both
// sides: a membarrier system call before it sleeps makes every registered process's pending stores
// visible, so the ringer (the hot path, twice per message) needs no fence. Without it (a kernel
// without MEMBARRIER_CMD_GLOBAL_EXPEDITED, or a rank that could not register), both sides fence.
#pragma once

#include <atomic>
#include <cstdint>

namespace strata {

struct Doorbell {
  alignas(64) std::atomic<uint32_t> seq;
  std::atomic<uint32_t> sleeping;
  std::atomic<uint32_t> asymmetric;  // set by the owner before any peer rings, when every local rank registered

  // Peer side, after publishing a head or tail.
  void ring();
  // Owner side: announce the intent to sleep and read the sequence to sleep on. The caller then
  // checks its conditions once more and calls sleep(seq) only if nothing is ready.
  uint32_t prepareSleep();
  void sleep(uint32_t seq, int timeoutMs);
  void cancelSleep() { sleeping.store(0, std::memory_order_relaxed); }

  // Registers this process for the owners' membarrier (once per process; later calls return the
  // first answer). False where the kernel does not offer it, and under ThreadSanitizer, which cannot
  // see the ordering a membarrier gives.
  static bool RegisterAsymmetric();
};

}  // namespace strata
