#include "core/process.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace strata {

namespace {
std::atomic<int> g_pid{0};
}  // namespace

int ThisProcess() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_pid.store(getpid());
    pthread_atfork(nullptr, nullptr, [] { g_pid.store(getpid()); });
  });
  return g_pid.load(std::memory_order_relaxed);
}

}  // namespace strata
