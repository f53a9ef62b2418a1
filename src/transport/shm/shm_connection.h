// Shared-memory connections: the FIFO lives in the receiver's segment; the sender writes slots in
// place, so a message crosses memory once.
#pragma once

#include "transport/connection.h"
#include "transport/shm/doorbell.h"

namespace strata {

class ShmSendConnection : public SendConnection {
 public:
  ShmSendConnection(int peer, SlotFifo fifo, Doorbell* receiverBell)
      : SendConnection(peer), fifo_(fifo), bell_(receiverBell) {}
  size_t slotBytes() const override { return fifo_.slotBytes; }
  void* tryAcquire() override;
  void post(size_t bytes) override;
  bool slotsShared() const override { return true; }

 private:
  SlotFifo fifo_;
  Doorbell* bell_;
  uint64_t head_ = 0;
  uint64_t tailSeen_ = 0;  // last tail read; refreshed only when the FIFO looks full
};

class ShmRecvConnection : public RecvConnection {
 public:
  ShmRecvConnection(int peer, SlotFifo fifo, Doorbell* senderBell)
      : RecvConnection(peer), fifo_(fifo), bell_(senderBell) {}
  const void* tryPeek(size_t* bytes) override;
  void release() override;

 private:
  SlotFifo fifo_;
  Doorbell* bell_;
  uint64_t tail_ = 0;
  uint64_t headSeen_ = 0;
};

}  // namespace strata
