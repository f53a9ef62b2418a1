#include "transport/net/tcp/tcp_connection.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <new>

namespace strata {

LocalSlots::LocalSlots(int nslots, size_t slotBytes) : nslots_(nslots), slotBytes_(slotBytes) {
  base_ = static_cast<char*>(aligned_alloc(4096, nslots * slotBytes));
  if (!base_) throw std::bad_alloc();
}

LocalSlots::~LocalSlots() { free(base_); }

TcpSendConnection::TcpSendConnection(int peer, std::vector<int> fds, int nslots, size_t slotBytes)
    : SendConnection(peer), slots_(nslots, slotBytes), fds_(std::move(fds)) {
  for (size_t j = 0; j < fds_.size(); ++j) socks_.push_back(SockState{j, 0});
}

void* TcpSendConnection::tryAcquire() {
  if (head_ - tail_ >= static_cast<uint64_t>(slots_.nslots())) return nullptr;
  return slots_.slot(head_);
}

void TcpSendConnection::post(size_t bytes) {
  sizes_[head_ % slots_.nslots()] = static_cast<uint32_t>(bytes);
  ++head_;
}

Status TcpSendConnection::progress(bool* progressed) {
  const uint64_t k = fds_.size();
  const int n = slots_.nslots();
  for (size_t j = 0; j < fds_.size(); ++j) {
    SockState& st = socks_[j];
    while (st.seq < head_) {
      TcpFrameHeader hdr{sizes_[st.seq % n], static_cast<uint32_t>(st.seq)};
      const size_t total = sizeof(hdr) + hdr.bytes;
      iovec iov[2];
      int niov = 0;
      if (st.sent < sizeof(hdr)) {
        iov[niov++] = {reinterpret_cast<char*>(&hdr) + st.sent, sizeof(hdr) - st.sent};
        iov[niov++] = {slots_.slot(st.seq), hdr.bytes};
      } else {
        iov[niov++] = {slots_.slot(st.seq) + (st.sent - sizeof(hdr)), total - st.sent};
      }
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = niov;
      ssize_t w = sendmsg(fds_[j], &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
        return MakeSysError(errno, "TCP send to rank %d failed", peer());
      }
      *progressed = true;
      st.sent += w;
      if (st.sent < total) continue;
      done_[st.seq % n] = true;
      st.seq += k;
      st.sent = 0;
    }
  }
  while (tail_ < head_ && done_[tail_ % n]) done_[tail_++ % n] = false;
  return Status::Ok();
}

void TcpSendConnection::addPollFds(std::vector<pollfd>* fds) {
  for (size_t j = 0; j < fds_.size(); ++j)
    if (socks_[j].seq < head_) fds->push_back(pollfd{fds_[j], POLLOUT, 0});
}

TcpRecvConnection::TcpRecvConnection(int peer, std::vector<int> fds, int nslots, size_t slotBytes)
    : RecvConnection(peer), slots_(nslots, slotBytes), fds_(std::move(fds)) {
  for (size_t j = 0; j < fds_.size(); ++j) socks_.push_back(SockState{j, 0, {}, false});
}

const void* TcpRecvConnection::tryPeek(size_t* bytes) {
  if (tail_ >= head_) return nullptr;
  *bytes = sizes_[tail_ % slots_.nslots()];
  return slots_.slot(tail_);
}

Status TcpRecvConnection::progress(bool* progressed) {
  const uint64_t k = fds_.size();
  const int n = slots_.nslots();
  for (size_t j = 0; j < fds_.size(); ++j) {
    SockState& st = socks_[j];
    while (!st.closed && slotFree(st.seq)) {
      char* dst;
      size_t want;
      if (st.got < sizeof(TcpFrameHeader)) {
        dst = reinterpret_cast<char*>(&st.hdr) + st.got;
        want = sizeof(TcpFrameHeader) - st.got;
      } else {
        dst = slots_.slot(st.seq) + (st.got - sizeof(TcpFrameHeader));
        want = sizeof(TcpFrameHeader) + st.hdr.bytes - st.got;
      }
      ssize_t r = want ? recv(fds_[j], dst, want, MSG_DONTWAIT) : 0;
      if (want && r == 0) {
        if (st.got != 0)
          return MakeError(strataRemoteError, "rank %d closed its TCP connection in the middle of a message", peer());
        st.closed = true;
        break;
      }
      if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
        return MakeSysError(errno, "TCP receive from rank %d failed", peer());
      }
      *progressed = true;
      st.got += r;
      if (st.got == sizeof(TcpFrameHeader) && want) {
        // Bound what the wire says before it is used.
        if (st.hdr.bytes > slots_.slotBytes() || st.hdr.seq != static_cast<uint32_t>(st.seq))
          return MakeError(strataRemoteError, "corrupt frame from rank %d (bytes %u, seq %u, expected seq %u)",
                           peer(), st.hdr.bytes, st.hdr.seq, static_cast<uint32_t>(st.seq));
      }
      if (st.got < sizeof(TcpFrameHeader) || st.got < sizeof(TcpFrameHeader) + st.hdr.bytes) continue;
      sizes_[st.seq % n] = st.hdr.bytes;
      filled_[st.seq % n] = true;
      st.seq += k;
      st.got = 0;
    }
  }
  while (filled_[head_ % n] && head_ - tail_ < static_cast<uint64_t>(n)) filled_[head_++ % n] = false;
  return Status::Ok();
}

Status TcpRecvConnection::checkAlive() {
  if (tail_ < head_ || !socks_[head_ % socks_.size()].closed) return Status::Ok();
  return MakeError(strataRemoteError, "rank %d closed its TCP connection (did it exit or fail?)", peer());
}

void TcpRecvConnection::addPollFds(std::vector<pollfd>* fds) {
  for (size_t j = 0; j < fds_.size(); ++j)
    if (!socks_[j].closed && slotFree(socks_[j].seq)) fds->push_back(pollfd{fds_[j], POLLIN, 0});
}

}  // namespace strata
