// QuantPlanRun: one execution of a QuantPlan (src/algorithms/quant_plans.h) on one rank, advanced without
// ever blocking, over any ConnectionTable, like PlanRun for exact plans. Every piece of work is one call of
// the fused host kernel (HostQuantStep): dequantize what arrived, accumulate in fp32, quantize straight into
// the outgoing slot.
#pragma once

#include <poll.h>

#include <string>
#include <vector>

#include "algorithms/quant_plans.h"
#include "core/status.h"
#include "exec/run.h"
#include "transport/connection.h"

namespace strata {

class QuantPlanRun : public Run {
 public:
  // The plan and the connection table must outlive the run.
  QuantPlanRun(const QuantPlan& plan, ConnectionTable* conns);

  // Resolves the connections the plan names; fails if one is missing.
  Status init();
  // Binds the buffers (send, recv: the I/O type; acc: plan.accElems floats; enc: plan.encBytes bytes) and
  // rewinds. `call` numbers the communicator's quantized calls (the same on every rank): with the spec's
  // seed it picks the random bits of stochastic rounding, so a call repeats exactly and calls differ.
  void start(void* const* buffers, uint64_t call);
  Status advance(bool* progressed) override;
  bool done() const override { return finished_ && flushed_; }
  // Adds the descriptors to poll while blocked; true when it added any.
  bool pollFds(std::vector<pollfd>* fds) override;
  // "receive from rank 3 (channel 0), ...": what the unfinished queues wait for.
  std::string blockedOn() const override;
  std::vector<int> blockedPeers() const override;

 private:
  struct QueueState {
    const QPlanQueue* queue = nullptr;
    std::vector<SendConnection*> send;  // per step
    std::vector<RecvConnection*> recv;
    size_t step = 0;
    uint64_t done = 0;  // elements of the current step done
  };
  Status advanceQueue(QueueState& q, bool* progressed);
  Status finish(const QStep& s);
  char* at(const QRef& ref, uint64_t elem) const {
    const size_t width = ref.buf == kQAccBuf ? sizeof(float) : esize_;
    return static_cast<char*>(buffers_[ref.buf]) + (ref.offset + elem) * width;
  }
  uint8_t* enc(const QStep& s, uint64_t done) const {
    return static_cast<uint8_t*>(buffers_[kQEncBuf]) + s.encByte + (done / piece_) * pieceBytes_;
  }
  math::QuantParams paramsFor(const QStep& s) const;
  // The fused-step source fields for `ref` (the accumulator or an I/O buffer).
  void setSource(const QRef& ref, uint64_t elem, math::QuantStep* st) const;

  const QuantPlan& plan_;
  ConnectionTable* conns_;
  size_t esize_;
  math::QuantIoType io_;
  uint64_t piece_ = 0;       // elements per encoded piece
  uint64_t pieceBytes_ = 0;  // bytes of a full encoded piece
  uint64_t rawPiece_ = 0;    // elements per exact fp32 piece
  void* const* buffers_ = nullptr;
  uint64_t call_ = 0;
  std::vector<QueueState> queues_;
  std::vector<SendConnection*> sendConns_;
  std::vector<RecvConnection*> recvConns_;
  bool finished_ = false;
  bool flushed_ = false;
};

}  // namespace strata
