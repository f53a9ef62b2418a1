// TCP connections: the FIFO slots live in local memory on both sides; the executor's progress calls
// ship full slots from the sender's FIFO into free slots of the receiver's. Slot i of a connection
// travels on socket i % K of the peer's bundle, so K sockets share the load and each still delivers
// in order.
#pragma once

#include <memory>
#include <vector>

#include "transport/connection.h"

namespace strata {

// Frame header in front of every slot on the wire.
struct TcpFrameHeader {
  uint32_t bytes;
  uint32_t seq;  // low 32 bits of the slot sequence number, checked by the receiver
};

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
  struct SockState {
    uint64_t seq;   // next slot this socket carries
    size_t sent;    // bytes of that frame already written
  };
  LocalSlots slots_;
  std::vector<int> fds_;
  std::vector<SockState> socks_;
  uint32_t sizes_[kMaxSlots] = {};
  bool done_[kMaxSlots] = {};
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
  struct SockState {
    uint64_t seq;
    size_t got;  // bytes of the current frame received (header included)
    TcpFrameHeader hdr;
    bool closed;  // the peer closed this socket
  };
  bool slotFree(uint64_t seq) const { return seq - tail_ < static_cast<uint64_t>(slots_.nslots()); }
  LocalSlots slots_;
  std::vector<int> fds_;
  std::vector<SockState> socks_;
  uint32_t sizes_[kMaxSlots] = {};
  bool filled_[kMaxSlots] = {};
  uint64_t head_ = 0, tail_ = 0;
};

}  // namespace strata
