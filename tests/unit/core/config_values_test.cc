// Byte sizes as knobs take them (ParseBytes): digits and an optional K/M/G and B, nothing else, and never a
// value that wrapped. Expected values are written out by hand.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>

#include "core/config.h"

namespace strata {
namespace {

TEST(ParseBytes, Accepts) {
  const struct {
    const char* text;
    uint64_t want;
  } cases[] = {{"0", 0},           {"123", 123},         {"64K", 65536},          {"64k", 65536},
               {"1M", 1048576},    {"1MB", 1048576},     {"2G", 2147483648ull},   {"3gb", 3221225472ull},
               {"007", 7},         {"18446744073709551615", UINT64_MAX},        {"17179869183G", 18446744072635809792ull}};
  for (const auto& c : cases) {
    uint64_t got = 1;
    EXPECT_TRUE(ParseBytes(c.text, &got)) << c.text;
    EXPECT_EQ(got, c.want) << c.text;
  }
}

// Before the strict reader, strtoull took a sign, leading spaces, and wrapped on overflow, so "-1" was
// 2^64-1 bytes; text after a NUL was ignored.
TEST(ParseBytes, Refuses) {
  for (const std::string& text :
       {std::string(""), std::string("-1"), std::string("+5"), std::string(" 5"), std::string("5 "), std::string("K"),
        std::string("5KK"), std::string("5T"), std::string("0x10"), std::string("1.5M"),
        std::string("18446744073709551616"), std::string("17179869184G"), std::string("99999999999999999999999"),
        std::string("1\0K", 3), std::string("1B", 1) + std::string("\0", 1)}) {
    uint64_t got = 42;
    EXPECT_FALSE(ParseBytes(text, &got)) << "'" << text << "' (" << text.size() << " bytes)";
    EXPECT_EQ(got, 42u) << text;
  }
}

// A malformed knob falls back to its default (with a WARN line) instead of wrapping into range: an int knob
// of 2^32 + 2 used to read as 2.
TEST(ConfigKnobs, MalformedValuesFallBackToTheDefault) {
  const struct {
    const char* value;
    int64_t want;
  } ints[] = {{"12", 12}, {"4294967298", 8}, {"12abc", 8}, {"-9223372036854775809", 8}, {"0x10", 8}, {"-3", -3}};
  for (const auto& c : ints) {
    setenv("STRATA_NSLOTS", c.value, 1);
    EXPECT_EQ(ConfigInt("STRATA_NSLOTS"), c.want) << c.value;
  }
  unsetenv("STRATA_NSLOTS");
  EXPECT_EQ(ConfigInt("STRATA_NSLOTS"), 8);

  const struct {
    const char* value;
    uint64_t want;
  } sizes[] = {{"64K", 65536}, {"-1", 131072}, {"1T", 131072}, {"18446744073709551616", 131072}};
  for (const auto& c : sizes) {
    setenv("STRATA_SLOT_BYTES", c.value, 1);
    EXPECT_EQ(ConfigBytes("STRATA_SLOT_BYTES"), c.want) << c.value;
  }
  unsetenv("STRATA_SLOT_BYTES");
  EXPECT_EQ(ConfigBytes("STRATA_SLOT_BYTES"), 131072u);
}

// The bootstrap root runs on a detached thread that reads knobs (its log calls do), and it can still be running
// when the process exits. The knob registry used to be a static vector that exit() freed under it: a
// heap-use-after-free under ASan and a data race under TSan (found by InitTimeout.NamesTheRankThatNeverJoined
// in the TSan build). The child reads knobs on four detached threads while its main thread calls exit(); it must
// exit 0 within 10 s without a sanitizer report on its stderr (so this test has teeth in the sanitizer builds;
// with the old registry ASan reported the read in about half the runs, and the child sometimes hung).
TEST(ConfigRegistry, ReadableByADetachedThreadWhileTheProcessExits) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    std::atomic<int> running{0};
    for (int t = 0; t < 4; ++t)
      std::thread([&running] {
        running.fetch_add(1);
        for (;;)
          if (ConfigString("STRATA_DEBUG").empty()) _exit(3);
      }).detach();
    while (running.load() < 4) std::this_thread::yield();
    exit(0);
  }
  close(fds[1]);
  std::string err;
  const int64_t deadline = time(nullptr) + 10;
  bool eof = false;
  while (!eof && time(nullptr) < deadline) {
    pollfd p = {fds[0], POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) {
      eof = true;
    } else {
      err.append(buf, static_cast<size_t>(n));
    }
  }
  close(fds[0]);
  if (!eof) kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(eof) << "the child hung in exit()";
  EXPECT_EQ(err.find("Sanitizer"), std::string::npos) << err;
  EXPECT_TRUE(WIFEXITED(status)) << "child ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  if (WIFEXITED(status)) {
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
}

}  // namespace
}  // namespace strata
