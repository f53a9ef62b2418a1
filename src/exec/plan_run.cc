#include "exec/plan_run.h"

#include <algorithm>
#include <cstdlib>

#include "exec/host_reduce.h"

namespace strata {

PlanRun::PlanRun(const Plan& plan, ConnectionTable* conns)
    : plan_(plan), conns_(conns), esize_(DataTypeSize(plan.dtype)) {}

void PlanRun::start(void* const* buffers, uint64_t windowEpoch) {
  buffers_ = buffers;
  windowEpoch_ = windowEpoch;
  for (QueueState& q : queues_) {
    q.step = 0;
    q.done = 0;
  }
  finished_ = false;
  flushed_ = false;
}

namespace {
// Larger outputs than this leave the last-level cache before anyone reads them again.
constexpr uint64_t kStreamOutputBytes = 16ull << 20;

// Where PeerReduce lands a piece of the peer's buffer: one per thread, not one per cached plan (a communicator
// caches hundreds). A peer step runs to its end inside one advance(), so no two runs on a thread share it at once.
// Page-aligned, so that the kernel's copy into it starts on a line boundary wherever malloc would have put it
// (nullptr when memory is short: the step fails).
char* PeerPiece() {
  struct Piece {
    char* bytes = static_cast<char*>(std::aligned_alloc(4096, kPeerPieceBytes));
    ~Piece() { std::free(bytes); }
  };
  thread_local Piece piece;
  return piece.bytes;
}
// A run of window reads goes a piece of this many bytes per step at a time, the next piece of every step prefetched
// (docs/ALGORITHMS.md, "Reading the windows").
constexpr uint64_t kWindowReadPieceBytes = 1024;

bool IsLocal(StepOp op) { return op == StepOp::Copy || op == StepOp::LocalReduce; }

// Whether `count` elements at `a` and `count2` at `b` share memory (steps name their ranges by buffer and offset).
bool Overlap(const BufRef& a, uint64_t count, const BufRef& b, uint64_t count2) {
  return a.buf == b.buf && a.offset < b.offset + count2 && b.offset < a.offset + count;
}

// For each step, how many steps from it on form a run of window reads: Copy and LocalReduce steps that read windows
// (one-shot's reduction or copies, two-shot's reduction), none waiting on another queue, whose destinations either
// coincide (one reduction, step after step) or do not overlap, and which read nothing the run writes. Going through
// such a run a piece of every step at a time gives every element the steps' own order. 1 where there is no run.
std::vector<uint32_t> WindowRuns(const std::vector<Step>& steps) {
  std::vector<uint32_t> runs(steps.size(), 1);
  size_t i = 0;
  while (i < steps.size()) {
    size_t end = i;
    auto fits = [&](const Step& t) {
      if (!IsLocal(t.op) || t.src.buf < kWindowBuf || (end > i && t.waitQueue >= 0)) return false;
      for (size_t j = i; j < end; ++j) {
        const Step& u = steps[j];
        const bool same = u.dst.buf == t.dst.buf && u.dst.offset == t.dst.offset && u.count == t.count;
        if ((!same && Overlap(u.dst, u.count, t.dst, t.count)) || Overlap(u.dst, u.count, t.src, t.count) ||
            Overlap(t.dst, t.count, u.src, u.count))
          return false;
      }
      return !Overlap(t.dst, t.count, t.src, t.count);
    };
    while (end < steps.size() && fits(steps[end])) ++end;
    if (end - i >= 2) {
      for (size_t j = i; j < end; ++j) runs[j] = static_cast<uint32_t>(end - j);
      i = end;
    } else {
      ++i;
    }
  }
  return runs;
}
}  // namespace

void PlanRun::runLocalSteps(const Step* first, size_t count) {
  auto run = [&](const Step& s, uint64_t from, uint64_t n) {
    char* dst = at(s.dst, from);
    const char* src = at(s.src, from);
    if (s.op == StepOp::LocalReduce)
      HostReduce(dst, dst, src, n, plan_.dtype, plan_.op, divisorOf(s));
    else if (dst != src)
      HostCopy(dst, src, n * esize_);
  };
  if (count == 1) return run(*first, 0, first->count);
  const uint64_t piece = std::max<uint64_t>(1, kWindowReadPieceBytes / esize_);
  uint64_t most = 0;
  for (size_t j = 0; j < count; ++j) most = std::max(most, first[j].count);
  auto prefetch = [&](uint64_t from) {
    for (size_t j = 0; j < count; ++j) {
      if (from >= first[j].count) continue;
      const char* src = at(first[j].src, from);
      const uint64_t bytes = std::min(piece, first[j].count - from) * esize_;
      for (uint64_t b = 0; b < bytes; b += 64) __builtin_prefetch(src + b, 0, 3);
    }
  };
  prefetch(0);
  for (uint64_t from = 0; from < most; from += piece) {
    prefetch(from + piece);
    for (size_t j = 0; j < count; ++j)
      if (from < first[j].count) run(first[j], from, std::min(piece, first[j].count - from));
  }
}

Status PlanRun::resolveWindow(int rank) {
  if (rank >= static_cast<int>(windows_.size())) windows_.resize(rank + 1, nullptr);
  if (windows_[rank]) return Status::Ok();
  PeerWindow* w = conns_->windowOf(rank);
  STRATA_REQUIRE(w, strataInternalError,
                 "%s needs rank %d's peer-mapped window, which this rank cannot map (the direct algorithms need "
                 "every rank on one host, over shared memory)", plan_.algorithm.c_str(), rank);
  STRATA_REQUIRE(plan_.windowElems * esize_ <= w->halfBytes(), strataInternalError,
                 "%s needs %llu bytes of window, rank %d's holds %zu", plan_.algorithm.c_str(),
                 static_cast<unsigned long long>(plan_.windowElems * esize_), rank, w->halfBytes());
  windows_[rank] = w;
  return Status::Ok();
}

Status PlanRun::init() {
  uint64_t outputBytes = 0;
  for (const PlanQueue& q : plan_.queues)
    for (const Step& s : q.steps)
      if (s.dst.buf == kRecvBuf && s.op != StepOp::Copy && s.op != StepOp::LocalReduce) outputBytes += s.count * esize_;
  streamOutput_ = outputBytes >= kStreamOutputBytes;
  for (const PlanQueue& q : plan_.queues) {
    QueueState qs;
    qs.queue = &q;
    qs.windowRun = WindowRuns(q.steps);
    for (const Step& s : q.steps) {
      STRATA_REQUIRE(s.waitQueue < static_cast<int32_t>(plan_.queues.size()), strataInternalError,
                     "%s: a step waits for queue %d of %zu", plan_.algorithm.c_str(), s.waitQueue, plan_.queues.size());
      SendConnection* sc = nullptr;
      RecvConnection* rc = nullptr;
      for (const BufRef* ref : {&s.src, &s.dst})
        if (ref->buf >= kWindowBuf) STRATA_CHECK(resolveWindow(ref->buf - kWindowBuf));
      if (IsPeerOp(s.op)) {
        const int peer = s.op == StepOp::PeerWrite ? s.sendPeer : s.recvPeer;
        STRATA_REQUIRE(s.peer.buf == kSendBuf || s.peer.buf == kRecvBuf, strataInternalError,
                       "%s: a %s step names buffer %d of rank %d (only its send and receive buffers are published)",
                       plan_.algorithm.c_str(), StepOpName(s.op), s.peer.buf, peer);
        STRATA_CHECK(resolveWindow(peer));
        qs.send.push_back(nullptr);
        qs.recv.push_back(nullptr);
        continue;
      }
      if (s.op == StepOp::Signal || s.op == StepOp::WaitPeer || s.op == StepOp::ClaimWindow) {
        if (s.op == StepOp::WaitPeer) {
          STRATA_CHECK(resolveWindow(s.recvPeer));
          if (std::find(wake_.begin(), wake_.end(), windows_[s.recvPeer]) == wake_.end())
            wake_.push_back(windows_[s.recvPeer]);
        }
        qs.send.push_back(nullptr);
        qs.recv.push_back(nullptr);
        continue;
      }
      STRATA_CHECK(ConnectStep(conns_, q.channel, s.sendPeer, s.recvPeer, &sendConns_, &recvConns_, &sc, &rc));
      if (sc && sc->slotsShared()) sharedSlotBytes_ += s.count * esize_;
      qs.send.push_back(sc);
      qs.recv.push_back(rc);
    }
    queues_.push_back(std::move(qs));
  }
  return Status::Ok();
}

Status PlanRun::advanceQueue(QueueState& q, bool* progressed) {
  const std::vector<Step>& steps = q.queue->steps;
  while (q.step < steps.size()) {
    const Step& s = steps[q.step];
    if (s.waitQueue >= 0 && queues_[s.waitQueue].step < s.waitSteps) return Status::Ok();
    SendConnection* out = q.send[q.step];
    RecvConnection* in = q.recv[q.step];
    const int divisor = divisorOf(s);
    if (s.op == StepOp::Signal) {
      PeerWindow* own = windows_[s.dst.buf - kWindowBuf];
      own->setShape(static_cast<int>(windowEpoch_ & 1), shapeWord());
      if (plan_.peerElems)
        own->publishBuffers(static_cast<int>(windowEpoch_ & 1), buffers_[kSendBuf], buffers_[kRecvBuf]);
      own->raise(flagValue(s.count));
      for (PeerWindow* w : wake_) w->wake();
      ++q.step;
      *progressed = true;
      continue;
    }
    if (s.op == StepOp::ClaimWindow) {
      PeerWindow* own = windows_[s.dst.buf - kWindowBuf];
      HostClaimLines(own->half(static_cast<int>((windowEpoch_ + 1) & 1)) + s.dst.offset * esize_, s.count * esize_);
      ++q.step;
      *progressed = true;
      continue;
    }
    if (s.op == StepOp::WaitPeer) {
      if (windows_[s.recvPeer]->flag() < flagValue(s.count)) return Status::Ok();
      const uint64_t theirs = windows_[s.recvPeer]->shape(static_cast<int>(windowEpoch_ & 1));
      if (theirs != shapeWord())
        return MakeError(strataInvalidUsage,
                         "rank %d's window holds %llu elements of type %d, this rank's call has %llu of type %d: the "
                         "ranks passed different counts or datatypes",
                         s.recvPeer, static_cast<unsigned long long>(theirs >> 8), static_cast<int>(theirs & 0xff),
                         static_cast<unsigned long long>(shapeWord() >> 8), static_cast<int>(plan_.dtype));
      ++q.step;
      *progressed = true;
      continue;
    }
    if (IsPeerOp(s.op)) {
      STRATA_CHECK(runPeerStep(s, divisor));
      ++q.step;
      *progressed = true;
      continue;
    }
    if (IsLocal(s.op)) {
      runLocalSteps(&s, q.windowRun[q.step]);
      q.step += q.windowRun[q.step];
      *progressed = true;
      continue;
    }
    // One slot-sized piece at a time; both ends cut the step the same way.
    const uint64_t slotElems = (out ? out->slotBytes() : 0) / esize_;
    uint64_t n = s.count - q.done;
    const size_t limit = out ? slotElems : 0;
    if (limit && n > limit) n = limit;
    const void* inSlot = nullptr;
    if (in) {
      size_t bytes = 0;
      inSlot = in->tryPeek(&bytes);
      if (!inSlot) return in->checkAlive();
      // Without a send side the piece size is whatever the sender cut; it must match ours.
      if (!out) n = std::min<uint64_t>(s.count - q.done, bytes / esize_);
      if (bytes != n * esize_ || bytes % esize_ != 0)
        return MakeError(strataInvalidUsage,
                         "rank %d sent %zu bytes where %llu were expected: do all ranks call the same collective "
                         "with the same count, type and root?",
                         in->peer(), bytes, static_cast<unsigned long long>(n * esize_));
    }
    void* outSlot = nullptr;
    if (out) {
      outSlot = out->tryAcquire();
      if (!outSlot) return Status::Ok();
    }
    const size_t bytes = n * esize_;
    const auto copyOut = streamOutput_ ? HostCopyStreaming : HostCopy;
    const bool streamSlot = streamSlots_ && out && out->slotsShared();
    const auto copySlot = streamSlot ? HostCopyStreaming : HostCopy;
    switch (s.op) {
      case StepOp::Send:
        copySlot(outSlot, at(s.src, q.done), bytes);
        break;
      case StepOp::Recv:
        copyOut(at(s.dst, q.done), inSlot, bytes);
        break;
      case StepOp::RecvReduce:
        HostReduce(at(s.dst, q.done), at(s.src, q.done), inSlot, n, plan_.dtype, plan_.op, divisor);
        break;
      case StepOp::RecvReduceSend:
        (streamSlot ? HostReduceStreaming : HostReduce)(outSlot, at(s.src, q.done), inSlot, n, plan_.dtype, plan_.op,
                                                        divisor);
        break;
      case StepOp::RecvReduceCopySend:
        if (streamSlot) {  // the result's cached copy is the output's, not the slot's
          char* dst = at(s.dst, q.done);
          const char* src = at(s.src, q.done);
          if (dst == src || dst + bytes <= src || src + bytes <= dst) {  // HostReduce's aliasing rule
            HostReduce(dst, src, inSlot, n, plan_.dtype, plan_.op, divisor);
            HostCopyStreaming(outSlot, dst, bytes);
            break;
          }
        }
        HostReduce(outSlot, at(s.src, q.done), inSlot, n, plan_.dtype, plan_.op, divisor);
        copyOut(at(s.dst, q.done), outSlot, bytes);
        break;
      case StepOp::RecvCopySend:
        copySlot(outSlot, inSlot, bytes);
        copyOut(at(s.dst, q.done), inSlot, bytes);
        break;
      default: break;
    }
    if (in) in->release();
    if (out) out->post(bytes);
    *progressed = true;
    q.done += n;
    if (q.done == s.count) {
      q.done = 0;
      ++q.step;
    }
  }
  return Status::Ok();
}

Status PlanRun::runPeerStep(const Step& s, int divisor) {
  const int h = static_cast<int>(windowEpoch_ & 1);
  const uint64_t bytes = s.count * esize_, peerOffset = s.peer.offset * esize_;
  switch (s.op) {
    case StepOp::PeerRead:
      return windows_[s.recvPeer]->readPeer(h, s.peer.buf, peerOffset, at(s.dst, 0), bytes);
    case StepOp::PeerWrite:
      return windows_[s.sendPeer]->writePeer(h, s.peer.buf, peerOffset, at(s.src, 0), bytes);
    default:
      break;
  }
  // PeerReduce: straight from the peer's buffer where it is mapped here (strataMemAlloc); else the peer's elements
  // land in a buffer small enough to stay in cache, one plan piece at a time.
  char* mapped = nullptr;
  STRATA_CHECK(windows_[s.recvPeer]->mapPeer(h, s.peer.buf, peerOffset, bytes, &mapped));
  if (mapped) {
    HostReduce(at(s.dst, 0), at(s.src, 0), mapped, s.count, plan_.dtype, plan_.op, divisor);
    return Status::Ok();
  }
  const uint64_t per = kPeerPieceBytes / esize_;
  char* piece = PeerPiece();
  STRATA_REQUIRE(piece, strataSystemError, "%s: no memory for a %llu-byte piece of rank %d's buffer",
                 plan_.algorithm.c_str(), static_cast<unsigned long long>(kPeerPieceBytes), s.recvPeer);
  for (uint64_t i = 0; i < s.count; i += per) {
    const uint64_t n = std::min(per, s.count - i);
    STRATA_CHECK(windows_[s.recvPeer]->readPeer(h, s.peer.buf, peerOffset + i * esize_, piece, n * esize_));
    HostReduce(at(s.dst, i), at(s.src, i), piece, n, plan_.dtype, plan_.op, divisor);
  }
  return Status::Ok();
}

Status PlanRun::advance(bool* progressed) {
  for (RecvConnection* c : recvConns_) STRATA_CHECK(c->progress(progressed));
  bool allDone = true;
  for (QueueState& q : queues_) {
    STRATA_CHECK(advanceQueue(q, progressed));
    allDone = allDone && q.step == q.queue->steps.size();
  }
  finished_ = allDone;
  return ProgressSends(sendConns_, progressed, &flushed_);
}

bool PlanRun::pollFds(std::vector<pollfd>* fds) {
  return PollConnections(WaitedRecvs(queues_), sendConns_, fds);
}

std::string PlanRun::blockedOn() const {
  return BlockedOnSteps(queues_, sendConns_, flushed_, [](const Step& s) {
    if (s.op != StepOp::WaitPeer) return std::string();
    return "rank " + std::to_string(s.recvPeer) + "'s window (stage " + std::to_string(s.count) + ")";
  });
}

std::vector<int> PlanRun::blockedPeers() const { return BlockedPeersOfSteps(queues_, sendConns_, flushed_); }

}  // namespace strata
