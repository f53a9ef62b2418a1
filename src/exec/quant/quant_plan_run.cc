#include "exec/quant/quant_plan_run.h"

#include <algorithm>
#include <cstring>

#include "exec/host_reduce.h"
#include "exec/quant/host_quant.h"
#include "exec/quant/quant_spec.h"

namespace strata {

QuantPlanRun::QuantPlanRun(const QuantPlan& plan, ConnectionTable* conns)
    : plan_(plan), conns_(conns), esize_(DataTypeSize(plan.dtype)), io_(math::QuantIoType::kFloat32) {}

Status QuantPlanRun::init() {
  STRATA_REQUIRE(QuantIoTypeOf(plan_.dtype, &io_), strataInternalError, "quantized plan of a non-floating type %d",
                 static_cast<int>(plan_.dtype));
  STRATA_CHECK(ValidateQuantParams(plan_.params));
  piece_ = QuantPieceElems(plan_.params, plan_.slotBytes);
  rawPiece_ = RawPieceElems(plan_.slotBytes);
  STRATA_REQUIRE(piece_ > 0 && rawPiece_ > 0, strataInternalError, "slots of %zu bytes hold no quantized block",
                 plan_.slotBytes);
  pieceBytes_ = math::QuantEncodedBytes(plan_.params, piece_);
  for (const QPlanQueue& q : plan_.queues) {
    QueueState qs;
    qs.queue = &q;
    for (const QStep& s : q.steps) {
      SendConnection* sc = nullptr;
      RecvConnection* rc = nullptr;
      STRATA_CHECK(ConnectStep(conns_, q.channel, s.sendPeer, s.recvPeer, &sendConns_, &recvConns_, &sc, &rc));
      STRATA_REQUIRE(!sc || sc->slotBytes() == plan_.slotBytes, strataInternalError,
                     "slots of %zu bytes to rank %d, the plan cut pieces for %zu", sc ? sc->slotBytes() : 0, s.sendPeer,
                     plan_.slotBytes);
      qs.send.push_back(sc);
      qs.recv.push_back(rc);
    }
    queues_.push_back(std::move(qs));
  }
  return Status::Ok();
}

void QuantPlanRun::start(void* const* buffers, uint64_t call) {
  buffers_ = buffers;
  call_ = call;
  for (QueueState& q : queues_) {
    q.step = 0;
    q.done = 0;
  }
  finished_ = false;
  flushed_ = false;
}

math::QuantParams QuantPlanRun::paramsFor(const QStep& s) const {
  math::QuantParams p = plan_.params;
  if (p.rounding == math::QuantRounding::kStochastic) p.seed = math::QuantDeriveSeed(p.seed, call_, s.stream);
  return p;
}

void QuantPlanRun::setSource(const QRef& ref, uint64_t elem, math::QuantStep* st) const {
  if (ref.buf == kQAccBuf) {
    st->acc_in = reinterpret_cast<const float*>(at(ref, elem));
  } else {
    st->local = at(ref, elem);
    st->local_type = io_;
  }
}

Status QuantPlanRun::finish(const QStep& s) {
  const math::QuantParams p = paramsFor(s);
  const int divisor = s.divide ? plan_.divisor : 0;
  for (uint64_t done = 0; done < s.count; done += piece_) {
    const uint64_t n = std::min(piece_, s.count - done);
    math::QuantStep st{};
    st.count = n;
    st.index_base = s.index + done;
    setSource(s.src, done, &st);
    st.deq_out = at(s.dst, done);
    st.deq_type = io_;
    st.divisor = divisor;
    if (!s.exact) st.out = enc(s, done);
    HostQuantStep(p, st);
  }
  return Status::Ok();
}

Status QuantPlanRun::advanceQueue(QueueState& q, bool* progressed) {
  const std::vector<QStep>& steps = q.queue->steps;
  while (q.step < steps.size()) {
    const QStep& s = steps[q.step];
    if (s.waitQueue >= 0 && queues_[s.waitQueue].step < s.waitSteps) return Status::Ok();
    if (s.op == QStepOp::Finish) {
      STRATA_CHECK(finish(s));
      ++q.step;
      *progressed = true;
      continue;
    }
    SendConnection* out = q.send[q.step];
    RecvConnection* in = q.recv[q.step];
    const bool raw = s.op == QStepOp::SendRaw || (s.op == QStepOp::RecvAccum && s.raw);
    const uint64_t n = std::min(raw ? rawPiece_ : piece_, s.count - q.done);
    const size_t wire = raw ? n * sizeof(float) : math::QuantEncodedBytes(plan_.params, n);
    const void* inSlot = nullptr;
    if (in) {
      size_t bytes = 0;
      inSlot = in->tryPeek(&bytes);
      if (!inSlot) return in->checkAlive();
      if (bytes != wire)
        return MakeError(strataInvalidUsage,
                         "rank %d sent %zu bytes where %zu were expected (%s of %llu elements): do all ranks call the "
                         "same collective with the same count, type and quantization?",
                         in->peer(), bytes, wire, QStepOpName(s.op), static_cast<unsigned long long>(n));
    }
    void* outSlot = nullptr;
    if (out) {
      outSlot = out->tryAcquire();
      if (!outSlot) return Status::Ok();
    }
    const math::QuantParams p = paramsFor(s);
    math::QuantStep st{};
    st.count = n;
    st.index_base = s.index + q.done;
    switch (s.op) {
      case QStepOp::SendQuant:
        setSource(s.src, q.done, &st);
        st.out = static_cast<uint8_t*>(outSlot);
        HostQuantStep(p, st);
        break;
      case QStepOp::SendRaw:
        setSource(s.src, q.done, &st);
        st.deq_out = outSlot;
        st.deq_type = math::QuantIoType::kFloat32;
        HostQuantStep(p, st);
        break;
      case QStepOp::RecvAccum: {
        float* acc = reinterpret_cast<float*>(at(s.dst, q.done));
        if (s.first) {
          setSource(s.src, q.done, &st);
        } else {
          st.acc_in = acc;
        }
        if (s.raw) {
          // The exact partial is one more fp32 source; (a + b) is the same bits in either order.
          if (st.acc_in == nullptr) {
            st.acc_in = static_cast<const float*>(inSlot);
          } else {
            st.local = inSlot;
            st.local_type = math::QuantIoType::kFloat32;
          }
        } else {
          st.in[0] = static_cast<const uint8_t*>(inSlot);
        }
        st.acc_out = acc;
        HostQuantStep(p, st);
        break;
      }
      case QStepOp::SendEnc: std::memcpy(outSlot, enc(s, q.done), wire); break;
      case QStepOp::RecvEnc:
        if (s.store) std::memcpy(enc(s, q.done), inSlot, wire);
        if (s.deq) HostDequantize(p, static_cast<const uint8_t*>(inSlot), n, at(s.dst, q.done), io_);
        break;
      case QStepOp::Finish: break;
    }
    if (in) in->release();
    if (out) out->post(wire);
    *progressed = true;
    q.done += n;
    if (q.done == s.count) {
      q.done = 0;
      ++q.step;
    }
  }
  return Status::Ok();
}

Status QuantPlanRun::advance(bool* progressed) {
  for (RecvConnection* c : recvConns_) STRATA_CHECK(c->progress(progressed));
  // A queue may wait for another's steps: go round until nothing moves, so one call does all that is ready.
  bool allDone = false;
  for (bool moved = true; moved;) {
    moved = false;
    allDone = true;
    for (QueueState& q : queues_) {
      STRATA_CHECK(advanceQueue(q, &moved));
      allDone = allDone && q.step == q.queue->steps.size();
    }
    *progressed = *progressed || moved;
  }
  finished_ = allDone;
  return ProgressSends(sendConns_, progressed, &flushed_);
}

bool QuantPlanRun::pollFds(std::vector<pollfd>* fds) {
  return PollConnections(WaitedRecvs(queues_), sendConns_, fds);
}

std::string QuantPlanRun::blockedOn() const {
  return BlockedOnSteps(queues_, sendConns_, flushed_, [](const QStep&) { return std::string(); });
}

std::vector<int> QuantPlanRun::blockedPeers() const { return BlockedPeersOfSteps(queues_, sendConns_, flushed_); }

}  // namespace strata
