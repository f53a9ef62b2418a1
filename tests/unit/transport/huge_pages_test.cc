// Ordinary buffers moved onto transparent huge pages after a count of calls: which stretches move, when, that their
// bytes stay as they were, and what is left alone.
#include "transport/shm/huge_pages.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "mp/mp_harness.h"
#include "unit/with_retries.h"

namespace strata {
namespace {

using test::HugeKbOfMapping;
using test::KernelCollapsesHugePages;

// An anonymous private mapping of `bytes` starting on a 2 MiB boundary (where a large malloc gets one anywhere: aligned
// so that its stretches are known), every byte written with a pattern.
struct Mapping {
  explicit Mapping(size_t bytes) : bytes(bytes) {
    const size_t room = bytes + kHugePageBytes;
    char* raw = static_cast<char*>(mmap(nullptr, room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (raw == MAP_FAILED) return;
    char* aligned = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHugePageBytes - 1) &
                                            ~static_cast<uintptr_t>(kHugePageBytes - 1));
    if (aligned > raw) munmap(raw, static_cast<size_t>(aligned - raw));
    const size_t tail = room - static_cast<size_t>(aligned - raw) - bytes;
    if (tail) munmap(aligned + bytes, tail);
    base = aligned;
    fill();
  }
  void fill() {
    for (size_t i = 0; i < bytes; ++i) base[i] = static_cast<char>(i * 7 + i / 4096);
  }
  ~Mapping() {
    if (base) munmap(base, bytes);
  }
  bool intact() const {
    for (size_t i = 0; i < bytes; ++i)
      if (base[i] != static_cast<char>(i * 7 + i / 4096)) return false;
    return true;
  }
  char* base = nullptr;
  size_t bytes;
};

// The tests that need the kernel to collapse: skipped, saying why, where it does not.
class HugePagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!KernelCollapsesHugePages()) GTEST_SKIP() << "this kernel does not collapse anonymous memory (MADV_COLLAPSE)";
  }
  HugePageTable table;
};

// The library's own probe says what the kernel does, as read back from /proc/self/smaps without it.
TEST(HugePages, TheProbeAgreesWithTheKernel) { EXPECT_EQ(HugePagesCollapse(), KernelCollapsesHugePages()); }

TEST_F(HugePagesTest, StretchesInsideTheBufferMoveOnTheNthCall) {
  Mapping m(8 * kHugePageBytes);
  ASSERT_NE(m.base, nullptr);
  // A malloc-like buffer: 64 bytes in, to 64 bytes short of the end. Its first and last stretches hold bytes outside
  // it, within the same mapping: they move too.
  char* buf = m.base + 64;
  const size_t bytes = m.bytes - 128;
  EXPECT_FALSE(table.visit(buf, bytes, 3));
  EXPECT_FALSE(table.visit(buf, bytes, 3));
  EXPECT_EQ(HugeKbOfMapping(m.base), 0) << "collapsed before the third call";
  EXPECT_TRUE(table.visit(buf, bytes, 3));
  EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(m.bytes / 1024));
  EXPECT_TRUE(m.intact());
  EXPECT_TRUE(table.visit(buf, bytes, 3)) << "it stays on huge pages";
}

// The stretches at a buffer's ends: one that crosses the end of the mapping stays (the kernel refuses it), as does
// one that holds less than kHugePageMinOverlap of the buffer; the buffer counts as on huge pages from 3/4 of it.
TEST_F(HugePagesTest, TheEndsOfABufferMoveWithinItsMappingAndWhereMostlyItsOwn) {
  {
    Mapping m(2 * kHugePageBytes + kHugePageBytes / 2);  // its last stretch half mapped
    ASSERT_NE(m.base, nullptr);
    EXPECT_TRUE(table.visit(m.base + 64, m.bytes - 128, 1)) << "4 MiB of 5 on huge pages";
    EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(2 * kHugePageBytes / 1024));
    EXPECT_TRUE(m.intact());
  }
  for (const uint64_t outside : {kHugePageMinOverlap / 2, kHugePageMinOverlap - 64 * 1024}) {
    HugePageTable fresh;
    Mapping m(3 * kHugePageBytes);
    ASSERT_NE(m.base, nullptr);
    // The middle stretch whole, and `outside` bytes of each of the others.
    const bool most = 4 * kHugePageBytes >= 3 * (kHugePageBytes + 2 * outside);
    EXPECT_EQ(fresh.visit(m.base + kHugePageBytes - outside, kHugePageBytes + 2 * outside, 1), most) << outside;
    EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(kHugePageBytes / 1024)) << outside;
    EXPECT_TRUE(m.intact());
  }
}

void ChurningCase() {
  HugePageTable table;
  Mapping m(2 * kHugePageBytes);
  ASSERT_NE(m.base, nullptr);
  const size_t bytes = m.bytes;
  auto renew = [&] {
    void* again = mmap(m.base, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    ASSERT_EQ(again, static_cast<void*>(m.base));
    m.fill();
  };
  EXPECT_TRUE(table.visit(m.base, bytes, 1));
  EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(bytes / 1024));
  renew();
  EXPECT_EQ(HugeKbOfMapping(m.base), 0);
  EXPECT_TRUE(table.visit(m.base, bytes, 1)) << "collapsed again";
  EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(bytes / 1024));
  EXPECT_TRUE(m.intact());
  renew();
  EXPECT_FALSE(table.visit(m.base, bytes, 1)) << "renewed twice within 64 calls: churning";
  if (HugePagesScanned()) {
    EXPECT_EQ(HugeKbOfMapping(m.base), 0) << "found churning before a collapse";
  }
  renew();
  EXPECT_FALSE(table.visit(m.base, bytes, 1));
  EXPECT_EQ(HugeKbOfMapping(m.base), 0) << "a churning stretch is no longer collapsed";
  EXPECT_TRUE(m.intact());
  // Left alone until kHugePageRetryCalls calls after it was found churning (two calls ago), then collapsed again.
  for (uint32_t call = 2; call < kHugePageRetryCalls; ++call) ASSERT_FALSE(table.visit(m.base, bytes, 1)) << call;
  EXPECT_EQ(HugeKbOfMapping(m.base), 0);
  EXPECT_TRUE(table.visit(m.base, bytes, 1)) << "tried again";
  EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(bytes / 1024));
  EXPECT_TRUE(m.intact());
}

// Memory freed and mapped anew at the same addresses: collapsed again once (the check finds ordinary pages), left
// alone from the second time within 64 calls, and tried again kHugePageRetryCalls calls later. Where the kernel says
// which pages are huge (HugePagesScanned), that check is exact. Where not, a renewal is told by the CPU time of a
// collapse (over 200 us), and one that came in under that in one call is found churning a call later, after one more
// collapse: 3 runs of 30 on the development VM left a stretch on huge pages that way. There the case runs on a fresh
// table and mapping up to three times (WithRetries).
TEST_F(HugePagesTest, MemoryAllocatedAnewAtTheSameAddressesIsCollapsedAgainThenLeftAlone) {
  if (HugePagesScanned())
    ChurningCase();
  else
    WithRetries([] { ChurningCase(); });
}

// The library's scan against /proc/self/smaps: a stretch collapsed is seen as such, one of ordinary pages not.
TEST_F(HugePagesTest, TheScanSeesWhatSmapsSays) {
  if (!HugePagesScanned()) GTEST_SKIP() << "this kernel has no PAGEMAP_SCAN (Linux 6.7): renewals are timed instead";
  Mapping m(2 * kHugePageBytes);
  ASSERT_NE(m.base, nullptr);
  EXPECT_TRUE(table.visit(m.base, m.bytes, 1));
  ASSERT_EQ(HugeKbOfMapping(m.base), static_cast<long>(m.bytes / 1024));
  // Half of it renewed: the other stretch is left as it is, the renewed one collapsed again.
  void* again = mmap(m.base, kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  ASSERT_EQ(again, static_cast<void*>(m.base));
  EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(kHugePageBytes / 1024));
  m.fill();
  EXPECT_TRUE(table.visit(m.base, m.bytes, 1));
  EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(m.bytes / 1024));
  EXPECT_TRUE(m.intact());
}

// A child after fork checks its own pages, not its parent's: a scan of the parent's page tables would find the child's
// collapsed stretch missing on every call, collapse it again, and leave it alone as churning on the third.
TEST_F(HugePagesTest, AChildAfterForkChecksItsOwnPages) {
  if (!HugePagesScanned()) GTEST_SKIP() << "this kernel has no PAGEMAP_SCAN (Linux 6.7)";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    HugePageTable own;
    Mapping m(2 * kHugePageBytes);  // mapped after the fork: the parent has nothing at these addresses
    int wrong = m.base == nullptr ? 1 : 0;
    for (int call = 0; call < 4; ++call) wrong += own.visit(m.base, m.bytes, 1) ? 0 : 1;
    if (HugeKbOfMapping(m.base) != static_cast<long>(m.bytes / 1024)) ++wrong;
    _exit(wrong);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "calls of 4 the child found its buffer off huge pages";
}

TEST(HugePages, SmallBuffersAndZeroCallsAreLeftAlone) {
  HugePageTable table;
  Mapping m(2 * kHugePageBytes);
  ASSERT_NE(m.base, nullptr);
  for (int call = 0; call < 5; ++call) {
    EXPECT_FALSE(table.visit(m.base + 64, kHugePageBytes - 4096, 1)) << "under 2 MiB";
    EXPECT_FALSE(table.visit(m.base, 2 * kHugePageBytes, 0)) << "0: never";
  }
  EXPECT_FALSE(table.visit(nullptr, 4 * kHugePageBytes, 1));
  EXPECT_EQ(HugeKbOfMapping(m.base), 0);
  EXPECT_TRUE(m.intact());
}

// Over kHugePageMaxBytes the move costs more than an out-of-place call wins (huge_pages.h): such a buffer is not
// moved, but counts as on huge pages once calls on its parts (a rotation through it) moved 3/4 of it.
TEST_F(HugePagesTest, BuffersOverTheLimitAreNotMovedButCountWhatTheirPartsMoved) {
  Mapping m(2 * kHugePageMaxBytes);
  ASSERT_NE(m.base, nullptr);
  for (int call = 0; call < 3; ++call) EXPECT_FALSE(table.visit(m.base, m.bytes, 1));
  EXPECT_EQ(HugeKbOfMapping(m.base), 0);
  EXPECT_TRUE(table.visit(m.base, kHugePageMaxBytes, 1));
  EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(kHugePageMaxBytes / 1024));
  EXPECT_FALSE(table.visit(m.base, m.bytes, 1)) << "half of it moved";
  EXPECT_TRUE(table.visit(m.base + kHugePageMaxBytes / 2, kHugePageMaxBytes, 1));
  EXPECT_TRUE(table.visit(m.base, m.bytes, 1)) << "3/4 of it moved";
  EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(kHugePageMaxBytes * 3 / 2 / 1024));
  EXPECT_TRUE(m.intact());
}

// A buffer passed in place moves up to kHugePageMaxInPlaceBytes (huge_pages.h), 16 stretches a call; over that limit
// it is not moved either.
TEST_F(HugePagesTest, InPlaceBuffersMoveUpToTheirOwnLimit) {
  Mapping m(kHugePageMaxInPlaceBytes + kHugePageBytes);
  ASSERT_NE(m.base, nullptr);
  const size_t mid = kHugePageMaxBytes + 8 * kHugePageBytes;  // 24 stretches, over the out-of-place limit
  EXPECT_FALSE(table.visit(m.base, mid, 1)) << "out of place it stays";
  EXPECT_EQ(HugeKbOfMapping(m.base), 0);
  EXPECT_FALSE(table.visit(m.base, mid, 1, kHugePageMaxInPlaceBytes)) << "16 of its 24 stretches moved";
  EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(16 * kHugePageBytes / 1024));
  EXPECT_TRUE(table.visit(m.base, mid, 1, kHugePageMaxInPlaceBytes));
  EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(mid / 1024));
  // The whole mapping is over the in-place limit: nothing more moves, and 24 of its 33 stretches are under 3/4.
  for (int call = 0; call < 3; ++call) EXPECT_FALSE(table.visit(m.base, m.bytes, 1, kHugePageMaxInPlaceBytes));
  EXPECT_EQ(HugeKbOfMapping(m.base), static_cast<long>(mid / 1024));
  EXPECT_TRUE(m.intact());
}

TEST_F(HugePagesTest, MemoryTheKernelWillNotCollapseStaysAsItWas) {
  Mapping m(4 * kHugePageBytes);
  ASSERT_NE(m.base, nullptr);
  ASSERT_EQ(madvise(m.base, m.bytes, MADV_NOHUGEPAGE), 0);  // the owner said no
  for (int call = 0; call < 4; ++call) EXPECT_FALSE(table.visit(m.base, m.bytes, 2));
  EXPECT_EQ(HugeKbOfMapping(m.base), 0);
  EXPECT_TRUE(m.intact());
}

}  // namespace
}  // namespace strata
