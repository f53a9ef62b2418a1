// Ordinary (malloc) buffers that the ranks of one host reach by cross-memory attach, moved onto transparent huge
// pages. process_vm_readv and process_vm_writev pin the peer's pages one by one on every call: on 4 KiB pages that
// pinning took a third of a 2-rank 16 MiB twoshot allreduce (docs/PERFORMANCE.md, "Twenty-first session"), on 2 MiB
// pages it is gone. A buffer passed to enough calls has the 2 MiB stretches it overlaps collapsed in place
// (madvise MADV_COLLAPSE, Linux 6.1 and later): the same bytes at the same addresses, on larger pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace strata {

constexpr uint64_t kHugePageBytes = 2ull << 20;
// Buffers larger than this are not moved. A collapse took 0.55-0.8 ms per stretch on the development VM where its
// memory had been used before and up to 5.8 ms where not, while from 64 MiB an out-of-place twoshot on huge pages ran
// within 4% of the ring's time on ordinary pages (0.96x-1.01x): there the move only cost (with every size moved, the
// perf tool's 128 and 256 MiB out-of-place figures fell from 5.1 to 2.8 GB/s; docs/PERFORMANCE.md, "Twenty-second
// session"). Such a buffer still counts as on huge pages where calls on parts of it moved its stretches (a buffer that
// smaller calls rotate through).
constexpr uint64_t kHugePageMaxBytes = 32ull << 20;
// The same for a buffer passed in place (the call's input and output in one buffer). In place on huge pages twoshot
// reads and writes each line once, where the ring copies into and out of its slots: on 2 ranks at 64 MiB the perf
// tool's 20 in-place calls, the moves among them, took 9.5-12.0 ms against the ring's 13.7, on 4 ranks 23.2 against
// 33.4. Larger buffers gain as much once moved (256 MiB on 2 ranks: 37.1 ms against 54.3 over 150 calls), but the
// moves (about 4 ms a stretch there, by the averages) outweighed the gain within 20 calls: 64-67 ms against 54 at
// 256 MiB on 2 ranks, 72 against 64 at 128 MiB on 4 (docs/PERFORMANCE.md, "Twenty-third session").
constexpr uint64_t kHugePageMaxInPlaceBytes = 64ull << 20;
// A stretch at either end of a buffer, which holds memory outside it too, moves where at least this much of it is
// the buffer's and the rest lies in the same mapping (the kernel refuses a stretch that crosses a mapping's end). A
// large malloc buffer starts and ends anywhere in a stretch: without its ends a 4 MiB one moved half its pages.
constexpr uint64_t kHugePageMinOverlap = 512ull << 10;
// How many calls later a stretch the kernel would not collapse is tried again (it may have found no free huge page).
constexpr uint32_t kHugePageRetryCalls = 256;

// One 2 MiB stretch of a buffer: the calls that passed it, what became of it, and when it was last tried.
enum class StretchState : uint8_t {
  kOrdinary,  // not tried yet
  kHuge,      // collapsed; every later call checks it again (1.5 us where it still is)
  kRefused,   // the kernel said no; tried again kHugePageRetryCalls later
  kChurning,  // found on ordinary pages again and again: memory freed and allocated anew at these addresses, which
              // costs a collapse each time for a call or two of gain; left alone, tried again kHugePageRetryCalls later
};
struct Stretch {
  uint32_t seen = 0;
  uint32_t triedAt = 0;
  uint32_t renewedAt = 0;  // the call that last found it on ordinary pages again (0: never)
  StretchState state = StretchState::kOrdinary;
};

// What the process knows of its buffers' stretches (one table per process: HugePagesFor's; tests make their own).
class HugePageTable {
 public:
  // Counts one more call on [p, p + bytes) and collapses each 2 MiB-aligned stretch it overlaps by
  // kHugePageMinOverlap or more on the call that sees it the `after`-th time (0: never; at most 16 stretches a call,
  // the rest on the calls after). True where at least 3/4 of the buffer lies on collapsed stretches. A buffer under
  // 2 MiB or one the kernel will not collapse stays on ordinary pages (false); one over `maxBytes` (kHugePageMaxBytes,
  // or kHugePageMaxInPlaceBytes for a buffer passed in place) is not moved and its call not counted, but it counts as
  // on huge pages where smaller calls moved its stretches (not checked again). A collapsed
  // stretch is checked on every call (1.5 us): memory freed and allocated anew at its addresses is collapsed again,
  // and where that happens twice within 64 calls the stretch is left alone for kHugePageRetryCalls calls.
  bool visit(const void* p, size_t bytes, int after, uint64_t maxBytes = kHugePageMaxBytes);

 private:
  std::mutex mu_;
  std::unordered_map<uint64_t, Stretch> stretches_;  // by start address
};

// HugePageTable::visit on the process's table.
bool HugePagesFor(const void* p, size_t bytes, int after, uint64_t maxBytes = kHugePageMaxBytes);

// Whether this kernel collapses an anonymous buffer (one probe per process, on 4 MiB of scratch memory).
bool HugePagesCollapse();

// Whether this kernel says which pages are huge (ioctl PAGEMAP_SCAN, Linux 6.7 and later). Where it does, a collapsed
// stretch is checked by asking it; where not, by collapsing it again and timing that (a renewal costs a copy of
// 2 MiB, 550 us or more on the development VM, where a stretch still collapsed costs 1.1 us; over 200 us is a renewal).
bool HugePagesScanned();

}  // namespace strata
