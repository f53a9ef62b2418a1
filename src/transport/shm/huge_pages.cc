#include "transport/shm/huge_pages.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/log.h"
#include "core/process.h"

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
// Where the kernel cannot say which pages are huge (PageScan below, before Linux 6.7), a collapsed stretch is checked
// by collapsing it again: 1.1 us of the thread's time where it still is, 550 us or more on the development VM where new
// memory lies there (it copies 2 MiB). A check that took more than this found new memory. While other processes fault
// and collapse memory, a check takes longer: 52-89 us on the VM (the multi-process huge-page test in a loop beside
// other tests), where a bound of 50 us had found renewals twice within a few calls, left the stretch alone as
// churning, and run the 24 MiB allreduce on the ring where twoshot was due in 3 runs of 15. Yet 200 us missed a
// renewal now and then (3 runs of 30 of the churning test), which the scan never does.
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

// The kernel's page-table scan (ioctl PAGEMAP_SCAN on /proc/self/pagemap, Linux 6.7 and later), declared here as the
// kernel defines it: C library headers before 6.7 lack it.
struct PageRegion {
  uint64_t start, end, categories;
};
struct PageScanArg {
  uint64_t size, flags, start, end, walkEnd, vec, vecLen, maxPages, categoryInverted, categoryMask, categoryAnyofMask,
      returnMask;
};
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PageScanArg);
constexpr uint64_t kPageIsHuge = 1u << 6;  // mapped by one page-table entry of 2 MiB (or a hugetlb page)

// Whether a 2 MiB stretch is mapped as one huge page, asked of the kernel: 1.5 us where it is, 3.8 us where not
// (a scratch program, 10000 calls each on a stretch of a 16 MiB mapping, on the development VM). The file
// is opened once per process; a child after fork opens its own, since the parent's reads the parent's page tables.
class PageScan {
 public:
  enum Answer { kHugePage, kOrdinaryPages, kUnknown };
  Answer stretch(uint64_t at) {
    std::lock_guard<std::mutex> lock(mu_);
    const int pid = ThisProcess();
    if (pid != pid_) {
      if (fd_ >= 0) close(fd_);
      fd_ = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
      pid_ = pid;
    }
    if (fd_ < 0 || unsupported_) return kUnknown;
    PageRegion region{};
    PageScanArg arg{};
    arg.size = sizeof(arg);
    arg.start = at;
    arg.end = at + kHugePageBytes;
    arg.vec = reinterpret_cast<uint64_t>(&region);
    arg.vecLen = 1;
    arg.categoryMask = kPageIsHuge;
    arg.returnMask = kPageIsHuge;
    const int found = ioctl(fd_, kPagemapScan, &arg);
    if (found < 0) {
      if (errno == ENOTTY || errno == EINVAL) unsupported_ = true;  // no such ioctl, or an older argument layout
      return kUnknown;
    }
    return found == 1 && region.start == at && region.end == at + kHugePageBytes ? kHugePage : kOrdinaryPages;
  }

 private:
  std::mutex mu_;
  int pid_ = 0;
  int fd_ = -1;
  bool unsupported_ = false;
};

PageScan& ThePageScan() {
  static PageScan* scan = new PageScan();  // outlives every static destructor that might still run a call
  return *scan;
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
      const PageScan::Answer found = ThePageScan().stretch(at);
      if (found == PageScan::kHugePage) return true;
      const bool churns = s.renewedAt != 0 && s.seen - s.renewedAt < kChurnCalls;  // should this be a renewal
      if (found == PageScan::kOrdinaryPages && churns) {
        s.state = StretchState::kChurning;  // not collapsed: it would be gone again within a few calls
        s.triedAt = s.renewedAt = s.seen;
        return false;
      }
      const double t0 = ThreadCpuUs();
      if (!Collapse(p, kHugePageBytes)) {
        s.state = StretchState::kRefused;
        s.triedAt = s.seen;
        return false;
      }
      if (found == PageScan::kOrdinaryPages || ThreadCpuUs() - t0 > kRenewedCpuUs) {
        if (churns) {  // the collapse told, after the fact
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

bool HugePagesScanned() {
  static const char probe = 0;
  return ThePageScan().stretch(reinterpret_cast<uint64_t>(&probe) & ~(kHugePageBytes - 1)) != PageScan::kUnknown;
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
