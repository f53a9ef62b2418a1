#include "transport/shm/shm_connection.h"

namespace strata {

void* ShmSendConnection::tryAcquire() {
  if (head_ - tailSeen_ >= static_cast<uint64_t>(fifo_.nslots)) {
    tailSeen_ = fifo_.ctrl->tail.load(std::memory_order_acquire);
    if (head_ - tailSeen_ >= static_cast<uint64_t>(fifo_.nslots)) return nullptr;
  }
  return fifo_.slot(head_);
}

void ShmSendConnection::post(size_t bytes) {
  fifo_.ctrl->sizes[head_ % fifo_.nslots] = static_cast<uint32_t>(bytes);
  ++head_;
  fifo_.ctrl->head.store(head_, std::memory_order_release);
  bell_->ring();
}

const void* ShmRecvConnection::tryPeek(size_t* bytes) {
  if (tail_ >= headSeen_) {
    headSeen_ = fifo_.ctrl->head.load(std::memory_order_acquire);
    if (tail_ >= headSeen_) return nullptr;
  }
  *bytes = fifo_.ctrl->sizes[tail_ % fifo_.nslots];
  return fifo_.slot(tail_);
}

void ShmRecvConnection::release() {
  ++tail_;
  fifo_.ctrl->tail.store(tail_, std::memory_order_release);
  bell_->ring();
}

}  // namespace strata
