// The doorbell's sleep and ring must never miss each other, with the ringer's fence (symmetric) and with the
// sleeper's membarrier instead (asymmetric): the ringer publishes a value and rings right as the owner
// decides to sleep, round after round; a missed wake-up would leave the owner asleep until its timeout.
#include "transport/shm/doorbell.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace strata {
namespace {

void RaceSleepAgainstRing(bool asymmetric) {
  Doorbell bell{};
  bell.asymmetric.store(asymmetric ? 1 : 0);
  std::atomic<uint64_t> published{0}, announced{0};
  std::atomic<bool> stop{false};
  constexpr uint64_t kRounds = 3000;
  constexpr int kTimeoutMs = 1000;
  std::thread ringer([&] {
    for (uint64_t r = 1; r <= kRounds; ++r) {
      while (announced.load(std::memory_order_acquire) < r)
        if (stop.load(std::memory_order_relaxed)) return;
      // Odd rounds ring within 5 us (the ring lands while the owner decides), even rounds after up to 400 us
      // (the owner is asleep by then, however slow its membarrier is on a machine with many cores).
      const auto delay = std::chrono::nanoseconds((r % 2 != 0) ? (r * 7919) % 5000 : (r * 7919) % 400000);
      const auto until = std::chrono::steady_clock::now() + delay;
      while (std::chrono::steady_clock::now() < until) {
      }
      published.store(r, std::memory_order_release);
      bell.ring();
    }
  });
  int slow = 0, sleeps = 0;
  for (uint64_t r = 1; r <= kRounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    announced.store(r, std::memory_order_release);
    while (published.load(std::memory_order_acquire) < r) {
      const uint32_t seq = bell.prepareSleep();
      if (published.load(std::memory_order_acquire) >= r) {
        bell.cancelSleep();
        break;
      }
      bell.sleep(seq, kTimeoutMs);
      ++sleeps;
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(kTimeoutMs / 2) && ++slow == 3) break;
  }
  stop.store(true);
  ringer.join();
  std::printf("sleeps %d of %d rounds\n", sleeps, static_cast<int>(kRounds));
  EXPECT_EQ(slow, 0) << "rounds that slept until the timeout: a ring went unheard";
  EXPECT_GT(sleeps, static_cast<int>(kRounds / 10)) << "the owner hardly ever slept: the race was not run";
}

TEST(Doorbell, RingerWithFenceNeverMissesASleeper) { RaceSleepAgainstRing(false); }

TEST(Doorbell, SleeperWithMembarrierNeverMissesARinger) {
  if (!Doorbell::RegisterAsymmetric()) GTEST_SKIP() << "no MEMBARRIER_CMD_GLOBAL_EXPEDITED here (or a TSan build)";
  EXPECT_TRUE(Doorbell::RegisterAsymmetric());  // the first answer holds
  RaceSleepAgainstRing(true);
}

}  // namespace
}  // namespace strata
