// What a blocked run names (exec/run.h): the current step of every queue that is not waiting for another queue of
// the same run, in the words of the timeout's message, and the peers behind them.
#include "exec/run.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

// The fields of a plan's step and queue, and of a run's queue state, that the templates read.
struct FakeStep {
  int recvPeer = -1;
  int sendPeer = -1;
  int waitQueue = -1;
  uint32_t waitSteps = 0;
  std::string own;  // what the run's own naming says of it (empty: the usual naming)
};
struct FakeQueue {
  int channel = 0;
  std::vector<FakeStep> steps;
};
struct FakeState {
  const FakeQueue* queue = nullptr;
  size_t step = 0;
  std::vector<RecvConnection*> recv;  // per step
};

class FakeSend : public SendConnection {
 public:
  FakeSend(int peer, bool flushed) : SendConnection(peer), flushed_(flushed) {}
  size_t slotBytes() const override { return 0; }
  void* tryAcquire() override { return nullptr; }
  void post(size_t) override {}
  bool flushed() override { return flushed_; }

 private:
  bool flushed_;
};

class FakeRecv : public RecvConnection {
 public:
  explicit FakeRecv(int peer) : RecvConnection(peer) {}
  const void* tryPeek(size_t*) override { return nullptr; }
  void release() override {}
};

FakeStep Recv(int peer) {
  FakeStep s;
  s.recvPeer = peer;
  return s;
}
FakeStep Send(int peer) {
  FakeStep s;
  s.sendPeer = peer;
  return s;
}
FakeStep After(FakeStep s, int queue, uint32_t steps) {
  s.waitQueue = queue;
  s.waitSteps = steps;
  return s;
}

std::string Named(const std::vector<FakeState>& states, const std::vector<SendConnection*>& send = {},
                  bool flushed = true) {
  return BlockedOnSteps(states, send, flushed, [](const FakeStep& s) { return s.own; });
}

TEST(BlockedRun, AQueueWaitingForAnotherNamesNoPeer) {
  // Queue 0 receives from rank 3, then from rank 2; queue 1 sends to rank 1 once queue 0 has done one step.
  const FakeQueue q0{0, {Recv(3), Recv(2)}};
  const FakeQueue q1{1, {After(Send(1), 0, 1)}};
  FakeRecv from3(3), from2(2);
  std::vector<FakeState> states{{&q0, 0, {&from3, &from2}}, {&q1, 0, {nullptr}}};
  EXPECT_EQ(Named(states), "receive from rank 3 (channel 0)");
  EXPECT_EQ(BlockedPeersOfSteps(states, {}, true), std::vector<int>{3});
  EXPECT_EQ(WaitedRecvs(states), std::vector<RecvConnection*>{&from3});

  states[0].step = 1;  // queue 1's wait is over: both queues wait on a peer now
  EXPECT_EQ(Named(states), "receive from rank 2 (channel 0), send to rank 1 (channel 1)");
  EXPECT_EQ(BlockedPeersOfSteps(states, {}, true), (std::vector<int>{1, 2}));
  EXPECT_EQ(WaitedRecvs(states), std::vector<RecvConnection*>{&from2});
}

TEST(BlockedRun, ARunsOwnNamingAndRepeatsListedOnce) {
  FakeStep window = Recv(4);
  window.own = "rank 4's window (stage 2)";
  const FakeQueue q0{0, {Recv(5)}};
  const FakeQueue q1{0, {Recv(5)}};
  const FakeQueue q2{2, {window}};
  const std::vector<FakeState> states{{&q0, 0, {nullptr}}, {&q1, 0, {nullptr}}, {&q2, 0, {nullptr}}};
  EXPECT_EQ(Named(states), "receive from rank 5 (channel 0), rank 4's window (stage 2)");
  EXPECT_EQ(BlockedPeersOfSteps(states, {}, true), (std::vector<int>{4, 5}));
}

TEST(BlockedRun, EveryStepDoneNamesTheUndeliveredSends) {
  const FakeQueue q0{0, {Send(2)}};
  const std::vector<FakeState> states{{&q0, 1, {nullptr}}};
  FakeSend to2(2, false), to6(6, true);
  const std::vector<SendConnection*> send{&to6, &to2};
  EXPECT_EQ(Named(states, send, false), "delivery to rank 2");
  EXPECT_EQ(BlockedPeersOfSteps(states, send, false), std::vector<int>{2});
  EXPECT_EQ(Named(states, send, true), "");
  EXPECT_TRUE(BlockedPeersOfSteps(states, send, true).empty());
}

}  // namespace
}  // namespace strata
