// In-memory slot FIFOs for the plan simulators, with delivery delays: a posted slot reaches its reader only
// after 0 to maxDelay rounds of the simulation's clock (drawn per slot from a seeded generator; slots of one
// FIFO still arrive in order). Between real processes data arrives late and out of step from one connection
// to the next; the delays let the simulator see a queue that starts on data before another queue of its rank
// has produced what that data must be combined with.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/status.h"
#include "transport/connection.h"

namespace strata {

class SimClock {
 public:
  explicit SimClock(uint32_t seed, int maxDelay = 3) : rng_(seed), maxDelay_(maxDelay) {}
  uint64_t now() const { return now_; }
  void tick() { ++now_; }
  // When a slot posted now arrives.
  uint64_t due() {
    const uint64_t at = now_ + (maxDelay_ > 0 ? rng_() % static_cast<uint32_t>(maxDelay_ + 1) : 0);
    last_ = std::max(last_, at);
    return at;
  }
  // A round without progress is a deadlock only once everything posted has arrived.
  bool deliveriesPending() const { return now_ < last_; }

 private:
  std::mt19937 rng_;
  int maxDelay_;
  uint64_t now_ = 0, last_ = 0;
};

class SimFifo {
 public:
  SimFifo(SimClock* clock, int nslots, size_t slotBytes)
      : clock_(clock), slots_(static_cast<size_t>(nslots) * slotBytes), sizes_(nslots), dueAt_(nslots),
        nslots_(nslots), slotBytes_(slotBytes) {}
  size_t slotBytes() const { return slotBytes_; }
  void* acquire() { return head_ - tail_ < static_cast<uint64_t>(nslots_) ? slot(head_) : nullptr; }
  void post(size_t bytes) {
    sizes_[head_ % nslots_] = bytes;
    lastDue_ = std::max(lastDue_, clock_->due());  // in order behind the slots before it
    dueAt_[head_++ % nslots_] = lastDue_;
  }
  const void* peek(size_t* bytes) const {
    if (tail_ >= head_ || dueAt_[tail_ % nslots_] > clock_->now()) return nullptr;
    *bytes = sizes_[tail_ % nslots_];
    return slots_.data() + (tail_ % nslots_) * slotBytes_;
  }
  void release() { ++tail_; }

 private:
  char* slot(uint64_t seq) { return slots_.data() + (seq % nslots_) * slotBytes_; }
  SimClock* clock_;
  std::vector<char> slots_;
  std::vector<size_t> sizes_;
  std::vector<uint64_t> dueAt_;
  uint64_t head_ = 0, tail_ = 0, lastDue_ = 0;
  int nslots_;
  size_t slotBytes_;
};

class SimSend : public SendConnection {
 public:
  SimSend(int peer, SimFifo* f) : SendConnection(peer), f_(f) {}
  size_t slotBytes() const override { return f_->slotBytes(); }
  void* tryAcquire() override { return f_->acquire(); }
  void post(size_t bytes) override { f_->post(bytes); }

 private:
  SimFifo* f_;
};

class SimRecv : public RecvConnection {
 public:
  SimRecv(int peer, SimFifo* f) : RecvConnection(peer), f_(f) {}
  const void* tryPeek(size_t* bytes) override { return f_->peek(bytes); }
  void release() override { f_->release(); }

 private:
  SimFifo* f_;
};

// One direction between two ranks on one channel.
struct SimLink {
  std::unique_ptr<SimFifo> fifo;
  std::unique_ptr<SimSend> send;
  std::unique_ptr<SimRecv> recv;
  void make(SimClock* clock, int from, int to, int nslots, size_t slotBytes) {
    fifo = std::make_unique<SimFifo>(clock, nslots, slotBytes);
    send = std::make_unique<SimSend>(to, fifo.get());
    recv = std::make_unique<SimRecv>(from, fifo.get());
  }
};

// Advances every rank's run (PlanRun or QuantPlanRun, started) in turn, a tick of `clock` after each round, until
// all are done. A round in which nothing moved and nothing is in flight is a deadlock: the error names what each
// unfinished rank waits for.
template <typename Runs>
Status DriveRuns(Runs& runs, SimClock& clock) {
  const int n = static_cast<int>(runs.size());
  for (;;) {
    bool any = false, all = true;
    for (int r = 0; r < n; ++r) {
      if (runs[r]->done()) continue;
      bool progressed = false;
      Status st = runs[r]->advance(&progressed);
      if (!st.ok()) return MakeError(st.code(), "rank %d: %s", r, st.message().c_str());
      any = any || progressed;
      all = all && runs[r]->done();
    }
    if (all) return Status::Ok();
    if (!any && !clock.deliveriesPending()) {
      std::string blocked;
      for (int r = 0; r < n && blocked.size() < 2000; ++r)
        if (!runs[r]->done()) blocked += " rank " + std::to_string(r) + " waits for " + runs[r]->blockedOn() + ";";
      return MakeError(strataInternalError, "deadlock:%s", blocked.c_str());
    }
    clock.tick();
  }
}

}  // namespace strata
