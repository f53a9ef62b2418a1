#include "transport/net/tcp/tcp_connection.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

namespace strata {

namespace {
// Pieces smaller than this cost more in system calls than parallel sockets gain.
constexpr size_t kMinPieceBytes = 16 << 10;

bool WouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

// A reset or broken connection is the peer's failure, not a local system error.
Status SocketError(int err, const char* what, int peer) {
  if (err == ECONNRESET || err == EPIPE || err == ETIMEDOUT || err == EHOSTUNREACH)
    return MakeError(strataRemoteError, "TCP %s rank %d failed: %s (did it exit or fail?)", what, peer, strerror(err));
  return MakeSysError(err, "TCP %s rank %d failed", what, peer);
}
}  // namespace

void TcpPieceRange(size_t bytes, int j, int k, size_t* begin, size_t* end) {
  const size_t pieces = std::max<size_t>(1, std::min<size_t>(k, bytes / kMinPieceBytes));
  if (static_cast<size_t>(j) >= pieces) {
    *begin = *end = 0;
    return;
  }
  *begin = bytes * j / pieces;
  *end = bytes * (j + 1) / pieces;
}

LocalSlots::LocalSlots(int nslots, size_t slotBytes) : nslots_(nslots), slotBytes_(slotBytes) {
  base_ = static_cast<char*>(aligned_alloc(4096, nslots * slotBytes));
  if (!base_) throw std::bad_alloc();
}

LocalSlots::~LocalSlots() { free(base_); }

TcpSendConnection::TcpSendConnection(int peer, std::vector<int> fds, int nslots, size_t slotBytes)
    : SendConnection(peer), slots_(nslots, slotBytes), fds_(std::move(fds)), socks_(fds_.size()) {}

void* TcpSendConnection::tryAcquire() {
  if (head_ - tail_ >= static_cast<uint64_t>(slots_.nslots())) return nullptr;
  return slots_.slot(head_);
}

void TcpSendConnection::post(size_t bytes) {
  sizes_[head_ % slots_.nslots()] = static_cast<uint32_t>(bytes);
  ++head_;
}

Status TcpSendConnection::pushSocket(size_t j, bool* progressed) {
  TcpSockState& st = socks_[j];
  const int k = static_cast<int>(fds_.size());
  while (st.seq < head_) {
    const uint32_t bytes = sizes_[st.seq % slots_.nslots()];
    size_t begin, end;
    TcpPieceRange(bytes, static_cast<int>(j), k, &begin, &end);
    const size_t hdrBytes = j == 0 ? sizeof(TcpFrameHeader) : 0;
    const size_t total = hdrBytes + (end - begin);
    if (total == 0) {  // this socket carries nothing of the slot
      ++st.seq;
      continue;
    }
    TcpFrameHeader hdr{bytes, static_cast<uint32_t>(st.seq)};
    iovec iov[2];
    int niov = 0;
    if (st.done < hdrBytes) iov[niov++] = {reinterpret_cast<char*>(&hdr) + st.done, hdrBytes - st.done};
    const size_t payloadDone = st.done > hdrBytes ? st.done - hdrBytes : 0;
    if (end - begin > payloadDone) iov[niov++] = {slots_.slot(st.seq) + begin + payloadDone, end - begin - payloadDone};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = niov;
    ssize_t w = sendmsg(fds_[j], &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (WouldBlock(errno)) break;
      return SocketError(errno, "send to", peer());
    }
    *progressed = true;
    st.done += w;
    if (st.done < total) continue;
    st.done = 0;
    ++st.seq;
  }
  return Status::Ok();
}

Status TcpSendConnection::progress(bool* progressed) {
  uint64_t oldest = head_;
  for (size_t j = 0; j < fds_.size(); ++j) {
    STRATA_CHECK(pushSocket(j, progressed));
    oldest = std::min(oldest, socks_[j].seq);
  }
  tail_ = oldest;  // a slot is free once every socket has sent its piece
  return Status::Ok();
}

void TcpSendConnection::addPollFds(std::vector<pollfd>* fds) {
  for (size_t j = 0; j < fds_.size(); ++j)
    if (socks_[j].seq < head_) fds->push_back(pollfd{fds_[j], POLLOUT, 0});
}

TcpRecvConnection::TcpRecvConnection(int peer, std::vector<int> fds, int nslots, size_t slotBytes)
    : RecvConnection(peer), slots_(nslots, slotBytes), fds_(std::move(fds)), socks_(fds_.size()) {
  std::fill(known_, known_ + kMaxSlots, UINT64_MAX);
}

const void* TcpRecvConnection::tryPeek(size_t* bytes) {
  if (tail_ >= head_) return nullptr;
  *bytes = sizes_[tail_ % slots_.nslots()];
  return slots_.slot(tail_);
}

bool TcpRecvConnection::ready(size_t j) const {
  const TcpSockState& st = socks_[j];
  if (st.closed || !slotFree(st.seq)) return false;
  return j == 0 || known_[st.seq % slots_.nslots()] == st.seq;
}

Status TcpRecvConnection::pullSocket(size_t j, bool* progressed) {
  TcpSockState& st = socks_[j];
  const int k = static_cast<int>(fds_.size());
  const int n = slots_.nslots();
  while (ready(j)) {
    const size_t hdrBytes = j == 0 ? sizeof(TcpFrameHeader) : 0;
    size_t begin = 0, end = 0;
    if (st.done >= hdrBytes) TcpPieceRange(sizes_[st.seq % n], static_cast<int>(j), k, &begin, &end);
    if (st.done >= hdrBytes && begin == end) {  // header known, nothing on this socket for this slot
      ++st.seq;
      st.done = 0;
      continue;
    }
    char* dst;
    size_t want;
    if (st.done < hdrBytes) {
      dst = reinterpret_cast<char*>(&st.hdr) + st.done;
      want = hdrBytes - st.done;
    } else {
      dst = slots_.slot(st.seq) + begin + (st.done - hdrBytes);
      want = (end - begin) - (st.done - hdrBytes);
    }
    ssize_t r = recv(fds_[j], dst, want, MSG_DONTWAIT);
    if (r == 0) {
      if (st.done != 0)
        return MakeError(strataRemoteError, "rank %d closed its TCP connection in the middle of a message", peer());
      st.closed = true;
      break;
    }
    if (r < 0) {
      if (WouldBlock(errno)) break;
      return SocketError(errno, "receive from", peer());
    }
    *progressed = true;
    st.done += r;
    if (j == 0 && st.done == hdrBytes) {
      // Bound what the wire says before it is used.
      if (st.hdr.bytes > slots_.slotBytes() || st.hdr.seq != static_cast<uint32_t>(st.seq))
        return MakeError(strataRemoteError, "corrupt frame from rank %d (bytes %u, seq %u, expected seq %u)", peer(),
                         st.hdr.bytes, st.hdr.seq, static_cast<uint32_t>(st.seq));
      sizes_[st.seq % n] = st.hdr.bytes;
      known_[st.seq % n] = st.seq;
      continue;
    }
    if (st.done == hdrBytes + (end - begin) && st.done > hdrBytes) {
      ++st.seq;
      st.done = 0;
    }
  }
  return Status::Ok();
}

Status TcpRecvConnection::progress(bool* progressed) {
  uint64_t complete = UINT64_MAX;
  for (size_t j = 0; j < fds_.size(); ++j) {
    STRATA_CHECK(pullSocket(j, progressed));
    complete = std::min(complete, socks_[j].seq);
  }
  head_ = complete;  // a slot is filled once every socket has delivered its piece
  return Status::Ok();
}

Status TcpRecvConnection::checkAlive() {
  if (tail_ < head_) return Status::Ok();
  for (const TcpSockState& st : socks_)
    if (st.closed && st.seq == head_)
      return MakeError(strataRemoteError, "rank %d closed its TCP connection (did it exit or fail?)", peer());
  return Status::Ok();
}

void TcpRecvConnection::addPollFds(std::vector<pollfd>* fds) {
  for (size_t j = 0; j < fds_.size(); ++j)
    if (ready(j)) fds->push_back(pollfd{fds_[j], POLLIN, 0});
}

}  // namespace strata
