// PlanRun: one execution of a Plan on one rank, advanced without ever blocking. The blocking
// executor (executor.h) loops over it and waits between rounds; the plan simulator advances the
// runs of all ranks in one thread.
#pragma once

#include <poll.h>

#include <string>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/plan.h"
#include "core/status.h"
#include "exec/run.h"
#include "transport/connection.h"

namespace strata {

class PlanRun : public Run {
 public:
  // The plan and the connection table must outlive the run.
  PlanRun(const Plan& plan, ConnectionTable* conns);

  // Resolves the connections the plan names; fails if one is missing. Once per plan: a run is
  // started again for every call that uses the plan.
  Status init();
  // Binds the buffers (plan.nBuffers base pointers: send, recv, scratch, ...) and rewinds to the
  // first step. The buffers must stay valid until done(). A plan that uses windows needs the
  // call's window epoch: 1, 2, 3, ... for the communicator's successive window-using calls, the
  // same sequence on every rank (it picks the half and the flag values).
  void start(void* const* buffers, uint64_t windowEpoch = 0);
  // Does every piece of work that is ready; sets *progressed when anything moved.
  Status advance(bool* progressed) override;
  // All steps done and every send has left this rank.
  bool done() const override { return finished_ && flushed_; }
  // Sockets to poll while nothing is ready; returns false when the plan uses no sockets.
  bool pollFds(std::vector<pollfd>* fds) override;
  // The peers this run is waiting for, e.g. "receive from rank 3 (channel 0)".
  std::string blockedOn() const override;
  // The same peers as ranks, ascending and distinct.
  std::vector<int> blockedPeers() const override;
  // Bytes one run writes into slots that its peers read in place (shared memory): what SlotStoreTuner weighs.
  uint64_t sharedSlotBytes() const { return sharedSlotBytes_; }
  // Write those slots with streaming stores, from the next piece on (HostCopyStreaming, HostReduceStreaming).
  void setStreamSlots(bool on) { streamSlots_ = on; }

 private:
  struct QueueState {
    const PlanQueue* queue;
    size_t step = 0;
    uint64_t done = 0;  // elements of the current step already processed
    std::vector<SendConnection*> send;  // per step
    std::vector<RecvConnection*> recv;
    std::vector<uint32_t> windowRun;  // per step: how many steps from it on read windows together (1: alone)
  };
  Status advanceQueue(QueueState& q, bool* progressed);
  // Copy and LocalReduce steps [first, first + count): one at a time, or, for a run of window reads, a piece of every
  // step at a time with the next pieces prefetched, so that the loads from every peer's cache go out together.
  void runLocalSteps(const Step* first, size_t count);
  // What a reduction of `s` divides its result by (0: none).
  int divisorOf(const Step& s) const { return s.postDivide ? plan_.divisor : 0; }
  char* at(const BufRef& ref, uint64_t elem) const {
    char* base = ref.buf >= kWindowBuf ? windows_[ref.buf - kWindowBuf]->half(static_cast<int>(windowEpoch_ & 1))
                                       : static_cast<char*>(buffers_[ref.buf]);
    return base + (ref.offset + elem) * esize_;
  }
  Status resolveWindow(int rank);
  // PeerRead, PeerReduce, PeerWrite: done at once (system calls that copy).
  Status runPeerStep(const Step& s, int divisor);
  static bool IsPeerOp(StepOp op) {
    return op == StepOp::PeerRead || op == StepOp::PeerReduce || op == StepOp::PeerWrite;
  }
  // Window flags: every call owns four values, one per stage.
  uint64_t flagValue(uint64_t stage) const { return windowEpoch_ * 4 + stage; }
  // This call's window contents as its peers must see them: element count and datatype.
  uint64_t shapeWord() const {
    return (plan_.windowElems ? plan_.windowElems : plan_.peerElems) << 8 | static_cast<uint64_t>(plan_.dtype);
  }

  const Plan& plan_;
  void* const* buffers_ = nullptr;
  ConnectionTable* conns_;
  size_t esize_;
  std::vector<QueueState> queues_;
  std::vector<SendConnection*> sendConns_;  // distinct, for progress and flush
  std::vector<RecvConnection*> recvConns_;
  std::vector<PeerWindow*> windows_;  // by rank; those the plan names
  std::vector<PeerWindow*> wake_;     // owners of the windows it waits on: woken by its signals
  uint64_t windowEpoch_ = 0;
  // The output is too large to stay in cache: write it with streaming stores (see HostCopyStreaming).
  bool streamOutput_ = false;
  bool streamSlots_ = false;
  uint64_t sharedSlotBytes_ = 0;
  bool finished_ = false;
  bool flushed_ = false;
};

}  // namespace strata
