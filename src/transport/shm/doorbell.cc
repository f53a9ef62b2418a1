#include "transport/shm/doorbell.h"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace strata {

namespace {
long Futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* ts) {
  // Shared (not private) futex: the word lives in memory mapped by several processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, ts, nullptr, 0);
}
}  // namespace

// ThreadSanitizer does not model fences (GCC rejects them under -fsanitize=thread), so that build
// uses read-modify-writes on the flag, which order the same way and cost a shared cache-line write.
#if defined(__SANITIZE_THREAD__)
#define STRATA_DOORBELL_RMW 1
#endif

bool Doorbell::RegisterAsymmetric() {
#ifdef STRATA_DOORBELL_RMW
  return false;
#else
  static const bool registered = [] {
    const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    const long need = MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
    return cmds >= 0 && (cmds & need) == need &&
           syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
  }();
  return registered;
#endif
}

void Doorbell::ring() {
  // Pairs with prepareSleep (Dekker): either the sleeper sees our update, or we see its flag and
  // wake it.
#ifdef STRATA_DOORBELL_RMW
  const bool asleep = sleeping.fetch_add(0, std::memory_order_seq_cst) != 0;
#else
  if (asymmetric.load(std::memory_order_relaxed)) std::atomic_signal_fence(std::memory_order_seq_cst);
  else std::atomic_thread_fence(std::memory_order_seq_cst);
  const bool asleep = sleeping.load(std::memory_order_relaxed) != 0;
#endif
  if (asleep) {
    seq.fetch_add(1, std::memory_order_seq_cst);
    Futex(&seq, FUTEX_WAKE, INT_MAX, nullptr);
  }
}

uint32_t Doorbell::prepareSleep() {
#ifdef STRATA_DOORBELL_RMW
  sleeping.exchange(1, std::memory_order_seq_cst);
#else
  sleeping.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Every ringer's store before this point is now visible here, and every later one sees `sleeping`.
  if (asymmetric.load(std::memory_order_relaxed) && syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0)
    asymmetric.store(0, std::memory_order_relaxed);  // cannot happen once registered; fail safe
#endif
  return seq.load(std::memory_order_seq_cst);
}

void Doorbell::sleep(uint32_t s, int timeoutMs) {
  timespec ts{timeoutMs / 1000, (timeoutMs % 1000) * 1000000L};
  Futex(&seq, FUTEX_WAIT, s, &ts);
  sleeping.store(0, std::memory_order_relaxed);
}

}  // namespace strata
