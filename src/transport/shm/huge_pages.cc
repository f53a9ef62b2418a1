#include "transport/shm/huge_pages.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/log.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1; older C libraries' headers lack it
#endif

namespace strata {

namespace {

// Stretches collapsed on one call at most: a 2 MiB collapse took 0.3-2 ms on the development VM, so a large buffer
// is moved over several calls rather than stalling one call (and its peers) for a quarter of a second.
constexpr int kMaxCollapsesPerCall = 16;
// Stretches remembered at most (32 GiB of buffers); past it the table starts again.
constexpr size_t kMaxStretches = 16384;
// Checking a stretch still on huge pages takes 0.2 us of the thread's time; collapsing one takes 550 us or more on the
// development VM (it copies 2 MiB). A check that took more than this found new memory at the stretch's addresses. While
// other processes fault and collapse memory, a check takes longer: 52-89 us on the VM (the multi-process huge-page test
// in a loop beside other tests), where a bound of 50 us had found renewals twice within a few calls, left the stretch
// alone as churning, and run the 24 MiB allreduce on the ring where twoshot was due in 3 runs of 15.
constexpr double kRenewedCpuUs = 200;
// Two renewals within this many calls of a stretch: its memory churns.
constexpr uint32_t kChurnCalls = 64;

// A collapse the kernel could not do for the moment (EAGAIN: a page it had to lock or isolate was busy, as when other
// processes collapse or fault at once) is tried again at once, a few times; any other refusal stands.
bool Collapse(void* at, size_t bytes) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (madvise(at, bytes, MADV_COLLAPSE) == 0) return true;
    if (errno != EAGAIN) return false;
  }
  return false;
}

double ThreadCpuUs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

// One more call on stretch `s` at `at`; `collapses` counts the collapses this call may still start. Whether the
// stretch lies on huge pages for this call.
bool Visit(Stretch& s, uint64_t at, int after, int* collapses) {
  void* p = reinterpret_cast<void*>(at);
  ++s.seen;
  switch (s.state) {
    case StretchState::kHuge: {
      const double t0 = ThreadCpuUs();
      if (!Collapse(p, kHugePageBytes)) {
        s.state = StretchState::kRefused;
        s.triedAt = s.seen;
        return false;
      }
      if (ThreadCpuUs() - t0 > kRenewedCpuUs) {
        if (s.renewedAt != 0 && s.seen - s.renewedAt < kChurnCalls) {
          s.state = StretchState::kChurning;
          s.triedAt = s.seen;
        }
        s.renewedAt = s.seen;
      }
      return s.state == StretchState::kHuge;
    }
    case StretchState::kOrdinary:
    case StretchState::kRefused:
    case StretchState::kChurning: {
      const bool due = s.state == StretchState::kOrdinary ? s.seen >= static_cast<uint32_t>(after)
                                                          : s.seen - s.triedAt >= kHugePageRetryCalls;
      if (!due || *collapses <= 0) return false;
      --*collapses;
      s.state = Collapse(p, kHugePageBytes) ? StretchState::kHuge : StretchState::kRefused;
      s.triedAt = s.seen;
      return s.state == StretchState::kHuge;
    }
  }
  return false;
}

}  // namespace

bool HugePagesCollapse() {
  static const bool works = [] {
    const size_t bytes = 2 * kHugePageBytes;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    std::memset(p, 1, bytes);
    const uint64_t first = (reinterpret_cast<uint64_t>(p) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
    const bool ok = Collapse(reinterpret_cast<void*>(first), kHugePageBytes);
    const int err = errno;
    munmap(p, bytes);
    if (ok)
      STRATA_LOG(INFO, SHM,
                 "huge pages: this kernel collapses anonymous memory (MADV_COLLAPSE): ordinary buffers "
                 "that peers reach by cross-memory attach move onto 2 MiB pages (STRATA_HUGE_PAGES)");
    else
      STRATA_LOG(INFO, SHM, "huge pages: madvise(MADV_COLLAPSE) refused (%s): ordinary buffers stay on their pages",
                 strerror(err));
    return ok;
  }();
  return works;
}

bool HugePageTable::visit(const void* p, size_t bytes, int after, uint64_t maxBytes) {
  if (after <= 0 || p == nullptr || bytes < kHugePageBytes || !HugePagesCollapse()) return false;
  const uint64_t begin = reinterpret_cast<uint64_t>(p), end = begin + bytes;
  const uint64_t first = begin & ~(kHugePageBytes - 1);
  const uint64_t last = (end + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const bool moves = bytes <= maxBytes;  // larger: what smaller calls on its stretches moved, as they left it
  std::lock_guard<std::mutex> lock(mu_);
  if (moves && stretches_.size() + (last - first) / kHugePageBytes > kMaxStretches) stretches_.clear();
  uint64_t huge = 0;  // the buffer's bytes on huge pages
  int collapses = kMaxCollapsesPerCall;
  for (uint64_t at = first; at < last; at += kHugePageBytes) {
    const uint64_t overlap = std::min(end, at + kHugePageBytes) - std::max(begin, at);
    if (overlap < kHugePageMinOverlap) continue;
    if (moves) {
      if (Visit(stretches_[at], at, after, &collapses)) huge += overlap;
    } else {
      auto it = stretches_.find(at);
      if (it != stretches_.end() && it->second.state == StretchState::kHuge) huge += overlap;
    }
  }
  return huge * 4 >= bytes * 3;
}

bool HugePagesFor(const void* p, size_t bytes, int after, uint64_t maxBytes) {
  static HugePageTable* table = new HugePageTable();  // outlives every static destructor that might still run a call
  return table->visit(p, bytes, after, maxBytes);
}

}  // namespace strata
