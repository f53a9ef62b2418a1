// strataMemAlloc's buffers: the registry every call looks its buffers up in, and a peer's mapping of them.
#include "transport/shm/shared_buffers.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "strata/strata.h"

namespace strata {
namespace {

TEST(SharedBuffers, FindsTheBufferHoldingAnAddressAndNothingElse) {
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_TRUE(AllocateSharedBuffer(10000, &a).ok());
  ASSERT_TRUE(AllocateSharedBuffer(3 << 20, &b).ok());
  char* pa = static_cast<char*>(a);
  SharedRegion r;
  ASSERT_TRUE(FindSharedBuffer(pa + 9999, &r));
  EXPECT_EQ(r.base, reinterpret_cast<uint64_t>(a));
  EXPECT_EQ(r.bytes, 10000u);
  EXPECT_GE(r.fd, 0);
  EXPECT_FALSE(FindSharedBuffer(pa + 10000, &r)) << "the page's rounding is not the buffer";
  EXPECT_FALSE(FindSharedBuffer(pa - 1, &r));
  int local = 0;
  EXPECT_FALSE(FindSharedBuffer(&local, &r));
  ASSERT_TRUE(FindSharedBuffer(static_cast<char*>(b) + (3 << 20) - 1, &r));
  const uint64_t idB = r.id;
  ASSERT_TRUE(FindSharedBuffer(a, &r));
  EXPECT_NE(r.id, idB);

  const uint64_t frees = SharedBufferFrees();
  EXPECT_TRUE(FreeSharedBuffer(a).ok());
  EXPECT_EQ(SharedBufferFrees(), frees + 1);
  EXPECT_FALSE(FindSharedBuffer(a, &r));
  // A new buffer never reuses an id, even at the same address.
  void* c = nullptr;
  ASSERT_TRUE(AllocateSharedBuffer(10000, &c).ok());
  ASSERT_TRUE(FindSharedBuffer(c, &r));
  EXPECT_NE(r.id, idB);
  EXPECT_TRUE(FreeSharedBuffer(b).ok());
  EXPECT_TRUE(FreeSharedBuffer(c).ok());
}

TEST(SharedBuffers, RefusesWhatItDidNotAllocate) {
  void* p = nullptr;
  EXPECT_EQ(strataMemAlloc(&p, 0), strataInvalidArgument);
  EXPECT_NE(std::string(strataGetLastError(nullptr)).find("size 0"), std::string::npos);
  EXPECT_EQ(strataMemAlloc(nullptr, 64), strataInvalidArgument);
  int local = 0;
  EXPECT_EQ(strataMemFree(&local), strataInvalidArgument);
  EXPECT_NE(std::string(strataGetLastError(nullptr)).find("not a buffer from strataMemAlloc"), std::string::npos);
  EXPECT_EQ(strataMemFree(nullptr), strataSuccess);
  ASSERT_EQ(strataMemAlloc(&p, 64), strataSuccess);
  EXPECT_EQ(strataMemFree(p), strataSuccess);
  EXPECT_EQ(strataMemFree(p), strataInvalidArgument) << "freed twice";
}

// A child process maps its parent's buffer by the published fd and sees, and changes, the same bytes.
TEST(SharedBuffers, APeerProcessMapsTheSamePages) {
  void* p = nullptr;
  ASSERT_TRUE(AllocateSharedBuffer(2 << 20, &p).ok());
  uint32_t* words = static_cast<uint32_t*>(p);
  for (size_t i = 0; i < (2u << 20) / 4; ++i) words[i] = static_cast<uint32_t>(i * 2654435761u);
  SharedRegion r;
  ASSERT_TRUE(FindSharedBuffer(p, &r));
  const pid_t parent = getpid();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    MappedRegion m;
    if (!MapPeerSharedBuffer(parent, r, &m).ok() || m.base == nullptr || m.bytes != r.bytes) _exit(2);
    uint32_t* seen = reinterpret_cast<uint32_t*>(m.base);
    for (size_t i = 0; i < (2u << 20) / 4; ++i)
      if (seen[i] != static_cast<uint32_t>(i * 2654435761u)) _exit(3);
    seen[12345] = 0xfeedbeef;
    UnmapPeerSharedBuffer(&m);
    SharedRegion wrong = r;
    wrong.bytes += 1 << 20;  // not the size the fd has: refused
    _exit(MapPeerSharedBuffer(parent, wrong, &m).ok() ? 4 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(words[12345], 0xfeedbeefu);
  EXPECT_TRUE(FreeSharedBuffer(p).ok());
}

}  // namespace
}  // namespace strata
