// Segment names and the cleanup a launcher runs after a rank that was killed during init.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "transport/shm/shm_segment.h"

namespace strata {
namespace {

bool Exists(const std::string& name) {
  struct stat st;
  return stat(("/dev/shm" + name).c_str(), &st) == 0;
}

TEST(ShmSegmentName, NamesTheProcessTheCounterAndTheTag) {
  EXPECT_EQ(ShmSegmentName(1234, 7, 0xabcULL), "/strata-1234-7-0000000000000abc");
}

TEST(RemoveSegmentsOfProcess, RemovesOnlyThatProcesssSegments) {
  // A process that died before unlinking: its names stay in /dev/shm until someone removes them.
  const pid_t dead = 214748000;  // above pid_max: no live process has it
  const std::string mine = ShmSegmentName(dead, 0, 0x1111), second = ShmSegmentName(dead, 3, 0x2222);
  const std::string other = ShmSegmentName(dead * 10 + 1, 0, 0x3333);  // its name starts with the same digits
  ShmSegment a, b, c;
  ASSERT_TRUE(a.create(mine, 4096).ok());
  ASSERT_TRUE(b.create(second, 4096).ok());
  ASSERT_TRUE(c.create(other, 4096).ok());
  std::vector<std::string> removed = RemoveSegmentsOfProcess(dead);
  std::sort(removed.begin(), removed.end());
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ("/" + removed[0], mine);
  EXPECT_EQ("/" + removed[1], second);
  EXPECT_FALSE(Exists(mine));
  EXPECT_FALSE(Exists(second));
  EXPECT_TRUE(Exists(other));
  EXPECT_TRUE(RemoveSegmentsOfProcess(dead).empty());
}

}  // namespace
}  // namespace strata
