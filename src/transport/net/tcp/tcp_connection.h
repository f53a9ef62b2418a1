// TCP connections: the FIFO slots live in local memory on both sides; the executor's progress calls
// ship full slots from the sender's FIFO into free slots of the receiver's. A large slot is cut into
// pieces carried by the K sockets of the bundle in parallel (socket 0 also carries each slot's
// header); a small one travels on socket 0 alone, so a short message costs one send and one receive.
#pragma once

#include <memory>
#include <vector>

#include "transport/connection.h"

namespace strata {

// Header in front of every slot on socket 0.
struct TcpFrameHeader {
  uint32_t bytes;
  uint32_t seq;  // low 32 bits of the slot sequence number, checked by the receiver
};

// The byte range of a slot of `bytes` that socket j of k carries.
void TcpPieceRange(size_t bytes, int j, int k, size_t* begin, size_t* end);

// Slot memory owned by one TCP connection.
class LocalSlots {
 public:
  LocalSlots(int nslots, size_t slotBytes);
  ~LocalSlots();
  char* slot(uint64_t seq) const { return base_ + (seq % nslots_) * slotBytes_; }
  int nslots() const { return nslots_; }
  size_t slotBytes() const { return slotBytes_; }

 private:
  char* base_;
  int nslots_;
  size_t slotBytes_;
};

// Progress of one socket through the slot sequence.
struct TcpSockState {
  uint64_t seq = 0;   // next slot this socket works on
  size_t done = 0;    // bytes of it moved so far (header included on socket 0)
  bool closed = false;
  TcpFrameHeader hdr{};
};

class TcpSendConnection : public SendConnection {
 public:
  TcpSendConnection(int peer, std::vector<int> fds, int nslots, size_t slotBytes);
  size_t slotBytes() const override { return slots_.slotBytes(); }
  void* tryAcquire() override;
  void post(size_t bytes) override;
  Status progress(bool* progressed) override;
  bool flushed() override { return tail_ == head_; }
  void addPollFds(std::vector<pollfd>* fds) override;

 private:
  Status pushSocket(size_t j, bool* progressed);
  LocalSlots slots_;
  std::vector<int> fds_;
  std::vector<TcpSockState> socks_;
  uint32_t sizes_[kMaxSlots] = {};
  uint64_t head_ = 0, tail_ = 0;
};

class TcpRecvConnection : public RecvConnection {
 public:
  TcpRecvConnection(int peer, std::vector<int> fds, int nslots, size_t slotBytes);
  const void* tryPeek(size_t* bytes) override;
  void release() override { ++tail_; }
  Status checkAlive() override;
  Status progress(bool* progressed) override;
  void addPollFds(std::vector<pollfd>* fds) override;

 private:
  Status pullSocket(size_t j, bool* progressed);
  bool slotFree(uint64_t seq) const { return seq - tail_ < static_cast<uint64_t>(slots_.nslots()); }
  // Socket j may work on its next slot: the slot is free and its size is known (from socket 0).
  bool ready(size_t j) const;
  LocalSlots slots_;
  std::vector<int> fds_;
  std::vector<TcpSockState> socks_;
  uint32_t sizes_[kMaxSlots] = {};
  uint64_t known_[kMaxSlots];  // which slot's header socket 0 has read, per FIFO position
  uint64_t head_ = 0, tail_ = 0;
};

}  // namespace strata
