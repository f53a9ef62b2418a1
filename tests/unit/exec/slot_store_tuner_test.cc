// SlotStoreTuner against simulated machines: which mode each call gets, when it tries the other one, and how
// fast it follows a machine whose faster mode changes.
#include "exec/slot_store_tuner.h"

#include <gtest/gtest.h>

#include <functional>
#include <thread>
#include <vector>

namespace strata {
namespace {

constexpr uint64_t kBytes = uint64_t{8} << 20;

// Runs `calls` calls of `bytes`, each taking timeNs(streaming, call index); returns the modes they ran in.
std::vector<bool> Drive(SlotStoreTuner& t, int calls, const std::function<uint64_t(bool, int)>& timeNs,
                        uint64_t bytes = kBytes, int first = 0) {
  std::vector<bool> modes;
  for (int i = first; i < first + calls; ++i) {
    const SlotStoreTuner::Call call = t.begin(bytes);
    modes.push_back(call.streaming);
    t.end(bytes, call, timeNs(call.streaming, i));
  }
  return modes;
}

std::vector<int> StreamingCalls(const std::vector<bool>& modes, int first = 0) {
  std::vector<int> at;
  for (size_t i = 0; i < modes.size(); ++i)
    if (modes[i]) at.push_back(first + static_cast<int>(i));
  return at;
}

uint64_t CachedFaster(bool streaming, int) { return streaming ? 3000000 : 1000000; }
uint64_t StreamingFaster(bool streaming, int) { return streaming ? 1000000 : 3000000; }

TEST(ParseSlotStores, Names) {
  SlotStores s = SlotStores::kAuto;
  ASSERT_TRUE(ParseSlotStores("streaming", &s));
  EXPECT_EQ(s, SlotStores::kStreaming);
  ASSERT_TRUE(ParseSlotStores("cached", &s));
  EXPECT_EQ(s, SlotStores::kCached);
  ASSERT_TRUE(ParseSlotStores("auto", &s));
  EXPECT_EQ(s, SlotStores::kAuto);
  for (const char* bad : {"", "Auto", "stream", "auto ", "1"}) EXPECT_FALSE(ParseSlotStores(bad, &s)) << bad;
  for (SlotStores x : {SlotStores::kAuto, SlotStores::kCached, SlotStores::kStreaming}) {
    ASSERT_TRUE(ParseSlotStores(SlotStoresName(x), &s));
    EXPECT_EQ(s, x);
  }
}

TEST(SlotStoreTuner, ForcedPoliciesHoldAtEverySize) {
  SlotStoreTuner streaming(SlotStores::kStreaming), cached(SlotStores::kCached);
  for (uint64_t bytes : {uint64_t{0}, uint64_t{64}, kBytes}) {
    EXPECT_EQ(StreamingCalls(Drive(streaming, 20, CachedFaster, bytes)).size(), 20u) << bytes;
    EXPECT_TRUE(StreamingCalls(Drive(cached, 20, StreamingFaster, bytes)).empty()) << bytes;
    EXPECT_TRUE(streaming.current(bytes));
    EXPECT_FALSE(cached.current(bytes));
  }
}

TEST(SlotStoreTuner, SmallCallsAreNeverTried) {
  SlotStoreTuner t;
  EXPECT_FALSE(t.tunes(SlotStoreTuner::kMinBytes - 1));
  EXPECT_TRUE(t.tunes(SlotStoreTuner::kMinBytes));
  EXPECT_FALSE(SlotStoreTuner(SlotStores::kStreaming).tunes(kBytes));
  EXPECT_FALSE(SlotStoreTuner(SlotStores::kCached).tunes(kBytes));
  EXPECT_TRUE(StreamingCalls(Drive(t, 50, StreamingFaster, SlotStoreTuner::kMinBytes - 1)).empty());
  EXPECT_FALSE(t.current(SlotStoreTuner::kMinBytes - 1));
  EXPECT_EQ(t.switches(), 0);
}

// Cached stays; streaming is tried at the third call (the first is not timed, the second times cached), then
// after 128 timed calls, then every 256.
TEST(SlotStoreTuner, KeepsTheFasterAndTriesTheOtherLessAndLessOften) {
  SlotStoreTuner t;
  const std::vector<int> tries = StreamingCalls(Drive(t, 1200, CachedFaster));
  std::vector<int> want;
  int at = 2, interval = 2 * SlotStoreTuner::kFirstInterval;
  while (at < 1200) {
    want.push_back(at);
    at += interval + 1;
    interval = std::min(2 * interval, SlotStoreTuner::kMaxInterval);
  }
  EXPECT_EQ(tries, want);
  EXPECT_EQ(t.switches(), 0);
  EXPECT_FALSE(t.current(kBytes));
}

// The other mode wins its first try (call 2) and its second (call 3): it takes over from there.
TEST(SlotStoreTuner, SwitchesAfterTwoWinningTries) {
  SlotStoreTuner t;
  const std::vector<bool> modes = Drive(t, 250, StreamingFaster);
  // Cached is tried again kFirstInterval timed calls after the switch, then twice as many after that.
  const int again = 3 + SlotStoreTuner::kFirstInterval + 1, later = again + 2 * SlotStoreTuner::kFirstInterval + 1;
  for (int i = 0; i < 250; ++i) EXPECT_EQ(modes[i], i >= 2 && i != again && i != later) << i;
  EXPECT_EQ(t.switches(), 1);
  EXPECT_TRUE(t.current(kBytes));
  EXPECT_TRUE(t.current(kBytes + 1));  // the same size class
  EXPECT_TRUE(t.current(kBytes * 2));  // not begun: the latest verdict's mode (ClassesNotBegunStartInTheLatestVerdict)
}

// Classes not begun start in the mode the calibration found faster (startIn); a class begun before keeps its own, and
// a class started streaming still tries ordinary stores and takes them back where they win.
TEST(SlotStoreTuner, ClassesNotBegunStartInTheModeTold) {
  SlotStoreTuner t;
  EXPECT_TRUE(StreamingCalls(Drive(t, 5, CachedFaster, kBytes * 2)) == std::vector<int>({2}));  // begun: cached
  t.startIn(true);
  EXPECT_TRUE(t.current(kBytes));
  EXPECT_FALSE(t.current(kBytes * 2)) << "begun before: its own mode";
  EXPECT_FALSE(t.current(1024)) << "under kMinBytes: never tuned";
  // Streaming faster: every call streams but the tries of ordinary stores (its third call, then kFirstInterval on).
  const std::vector<bool> modes = Drive(t, 200, StreamingFaster);
  const int again = 2 + 2 * SlotStoreTuner::kFirstInterval + 1;
  for (int i = 0; i < 200; ++i) EXPECT_EQ(modes[i], i != 2 && i != again) << i;
  EXPECT_EQ(t.switches(), 0);
  // Ordinary stores faster: the class started streaming switches to them at its second winning try.
  const std::vector<bool> back = Drive(t, 6, CachedFaster, kBytes * 4);
  EXPECT_TRUE(back == std::vector<bool>({true, true, false, false, false, false}));
  EXPECT_EQ(t.switches(), 1);
  EXPECT_FALSE(t.current(kBytes * 4));
  // Told again (another communicator's calibration): the classes not begun follow, the others keep theirs.
  t.startIn(false);
  EXPECT_FALSE(t.current(kBytes * 8));
  EXPECT_TRUE(t.current(kBytes));
  // A forced policy ignores it.
  SlotStoreTuner cached(SlotStores::kCached);
  cached.startIn(true);
  EXPECT_FALSE(cached.current(kBytes));
  EXPECT_TRUE(StreamingCalls(Drive(cached, 5, StreamingFaster)).empty());
}

// After init, each verdict of a try in any class sets the mode that classes not begun start in: a switch, and a try
// that loses (the mode in use kept). A class first called long after init then starts in what the machine favours now.
TEST(SlotStoreTuner, ClassesNotBegunStartInTheLatestVerdict) {
  SlotStoreTuner t;
  t.startIn(false);
  EXPECT_FALSE(t.current(kBytes * 2));
  // Streaming wins class kBytes's tries at calls 2 and 3: the switch is the verdict.
  EXPECT_TRUE(Drive(t, 6, StreamingFaster) == std::vector<bool>({false, false, true, true, true, true}));
  EXPECT_EQ(t.switches(), 1);
  EXPECT_TRUE(t.current(kBytes * 2)) << "not begun: the switch's mode";
  // That class starts streaming and runs so; then the machine turns, and ordinary stores win it back.
  EXPECT_TRUE(Drive(t, 6, CachedFaster, kBytes * 2) == std::vector<bool>({true, true, false, false, false, false}));
  EXPECT_EQ(t.switches(), 2);
  EXPECT_FALSE(t.current(kBytes * 4));
  EXPECT_TRUE(t.current(kBytes)) << "begun: its own mode until its own tries";

  // A kept mode is a verdict too: told streaming (another communicator's calibration) while class kBytes runs ordinary
  // stores faster, its try of streaming loses and the classes not begun start in ordinary stores again.
  SlotStoreTuner u;
  Drive(u, 2, CachedFaster);  // begun: its first call, then one timed call in ordinary stores
  u.startIn(true);
  EXPECT_TRUE(u.current(kBytes * 2));
  EXPECT_TRUE(Drive(u, 1, CachedFaster, kBytes, 2) == std::vector<bool>({true})) << "the try";
  EXPECT_FALSE(u.current(kBytes * 2)) << "the try lost: ordinary stores kept";
  EXPECT_EQ(u.switches(), 0);
}

// A lucky first try (a moment when the machine ran the other mode fast) is not confirmed by the second: no switch.
TEST(SlotStoreTuner, OneLuckyTryIsNoSwitch) {
  SlotStoreTuner t;
  const std::vector<bool> modes =
      Drive(t, 30, [](bool streaming, int i) -> uint64_t { return streaming ? (i == 2 ? 500000 : 3000000) : 1000000; });
  EXPECT_TRUE(modes[2]);
  EXPECT_TRUE(modes[3]) << "the win is tried again";
  for (int i = 4; i < 30; ++i) EXPECT_FALSE(modes[i]) << i;
  EXPECT_EQ(t.switches(), 0);
}

TEST(SlotStoreTuner, AWinUnderTheMarginIsNoSwitch) {
  SlotStoreTuner t;
  Drive(t, 100, [](bool streaming, int) -> uint64_t { return streaming ? 950000 : 1000000; });
  EXPECT_EQ(t.switches(), 0);
}

// The machine turns: cached stores become 4x slower (streaming ones unchanged). The faster of two consecutive
// calls being 1.5x slower than when cached was chosen makes the next call try streaming, which wins, and wins
// again at the call after.
TEST(SlotStoreTuner, FollowsTheMachineWhenTheModeInUseSlowsDown) {
  SlotStoreTuner t;
  const auto machine = [](bool streaming, int i) -> uint64_t {
    if (streaming) return 2000000;
    return i < 600 ? 1000000 : 4000000;
  };
  Drive(t, 600, machine);
  ASSERT_FALSE(t.current(kBytes));
  const std::vector<bool> after = Drive(t, 10, machine, kBytes, 600);
  EXPECT_FALSE(after[0]);
  EXPECT_FALSE(after[1]);
  EXPECT_TRUE(after[2]) << "the slowdown should have been tried at once";
  for (int i = 3; i < 10; ++i) EXPECT_TRUE(after[i]) << i;
  EXPECT_TRUE(t.current(kBytes));
  EXPECT_EQ(t.switches(), 1);
}

// One slow call alone (a preemption) is no slowdown: no try before the interval's.
TEST(SlotStoreTuner, OneSlowCallTriesNothing) {
  SlotStoreTuner t;
  Drive(t, 520, CachedFaster);  // the tries: calls 2, 131, 388, then 645
  const std::vector<bool> next = Drive(
      t, 60, [](bool streaming, int i) -> uint64_t { return streaming  ? 3000000
                                                            : i == 520 ? 9000000
                                                                       : 1000000; },
      kBytes, 520);
  EXPECT_TRUE(StreamingCalls(next).empty());
}

// Both modes change with the machine, as on the development VM: the tuner follows each turn within a few calls.
TEST(SlotStoreTuner, FollowsABimodalMachineBothWays) {
  SlotStoreTuner t;
  // Calls 0-299 and 600-899: cached 1 ms, streaming 2.5 ms; 300-599: cached 4 ms, streaming 1.2 ms.
  const auto machine = [](bool streaming, int i) -> uint64_t {
    const bool slow = (i / 300) % 2 == 1;
    if (streaming) return slow ? 1200000 : 2500000;
    return slow ? 4000000 : 1000000;
  };
  const std::vector<bool> modes = Drive(t, 900, machine);
  for (int turn : {300, 600}) {
    const bool want = turn == 300;
    int settled = -1;
    for (int i = turn; i < turn + 20 && settled < 0; ++i)
      if (modes[i] == want && modes[i + 1] == want && modes[i + 2] == want) settled = i;
    EXPECT_GE(settled, 0) << "turn at call " << turn;
    EXPECT_LE(settled, turn + 4) << "turn at call " << turn;
  }
  EXPECT_EQ(t.switches(), 2);
}

// Communicators of one process share a tuner and call it from their own threads, calls overlapping: a try that
// another communicator's calls overtook is dropped, and the class still settles on the faster mode for all.
TEST(SlotStoreTuner, SharedByThreadsThatOverlapTheirCalls) {
  SlotStoreTuner t;
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&t] {
      for (int i = 0; i < 2000; ++i) {
        const SlotStoreTuner::Call call = t.begin(kBytes);
        t.end(kBytes, call, call.streaming ? 1000000 : 3000000);
      }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_TRUE(t.current(kBytes));
  EXPECT_EQ(t.switches(), 1);
  // Interleaved by hand: two calls begun before either ends.
  SlotStoreTuner u;
  const SlotStoreTuner::Call a1 = u.begin(kBytes), b1 = u.begin(kBytes);  // first call (not timed), second
  u.end(kBytes, a1, 3000000);
  u.end(kBytes, b1, 3000000);
  const SlotStoreTuner::Call tryCall = u.begin(kBytes), overlap = u.begin(kBytes);
  EXPECT_TRUE(tryCall.trying);
  EXPECT_FALSE(overlap.trying) << "one try at a time";
  u.end(kBytes, overlap, 3000000);
  u.end(kBytes, tryCall, 1000000);
  EXPECT_EQ(u.switches(), 0) << "the first win is only confirmed by a second";
  // A try that overtakes the first timed call of the mode in use has nothing to compare with: it is tried again.
  SlotStoreTuner v;
  const SlotStoreTuner::Call first = v.begin(kBytes), inUse = v.begin(kBytes), early = v.begin(kBytes);
  v.end(kBytes, first, 3000000);
  ASSERT_TRUE(early.trying);
  v.end(kBytes, early, 1000000);
  v.end(kBytes, inUse, 3000000);
  EXPECT_TRUE(v.begin(kBytes).trying);
}

}  // namespace
}  // namespace strata
