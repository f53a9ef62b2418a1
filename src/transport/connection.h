// The connection contract: one direction between two ranks on one channel, a FIFO of fixed-size
// slots with head and tail counters (credit flow control). Executors see only slots, so every
// algorithm runs over every transport. Nothing here knows which collective it serves.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"

namespace strata {

constexpr int kMaxSlots = 64;

// Control block of a slot FIFO. The writer owns head and sizes, the reader owns tail.
struct FifoCtrl {
  alignas(64) std::atomic<uint64_t> head;
  alignas(64) std::atomic<uint64_t> tail;
  alignas(64) uint32_t sizes[kMaxSlots];
};

// A FIFO's memory: control block and nslots x slotBytes of slots.
struct SlotFifo {
  FifoCtrl* ctrl = nullptr;
  char* slots = nullptr;
  int nslots = 0;
  size_t slotBytes = 0;
  char* slot(uint64_t seq) const { return slots + (seq % nslots) * slotBytes; }
  static size_t BytesFor(int nslots, size_t slotBytes);  // ctrl + slots, page aligned
  static SlotFifo At(void* base, int nslots, size_t slotBytes);  // lays one out at base
};

class SendConnection {
 public:
  explicit SendConnection(int peer) : peer_(peer) {}
  virtual ~SendConnection() = default;
  int peer() const { return peer_; }
  virtual size_t slotBytes() const = 0;
  // A free slot to write into, or nullptr when the FIFO is full.
  virtual void* tryAcquire() = 0;
  // Publishes the slot returned by tryAcquire, holding `bytes`.
  virtual void post(size_t bytes) = 0;
  // Moves bytes for transports that need a hand (sockets); sets *progressed when anything moved.
  virtual Status progress(bool* progressed) {
    (void)progressed;
    return Status::Ok();
  }
  // True when every posted slot has left this rank (the FIFO memory may be reused or freed).
  virtual bool flushed() { return true; }
  // Adds the descriptors to poll while waiting for this connection.
  virtual void addPollFds(std::vector<pollfd>* fds) { (void)fds; }
  // True when the peer reads the slots where they were written (shared memory): how the writer stores into
  // them then decides where the reader finds the data (see SlotStoreTuner).
  virtual bool slotsShared() const { return false; }

 private:
  int peer_;
};

class RecvConnection {
 public:
  explicit RecvConnection(int peer) : peer_(peer) {}
  virtual ~RecvConnection() = default;
  int peer() const { return peer_; }
  // The next filled slot and its size, or nullptr when none has arrived.
  virtual const void* tryPeek(size_t* bytes) = 0;
  // Frees the slot returned by tryPeek.
  virtual void release() = 0;
  // Called when tryPeek found nothing: an error when nothing more can ever arrive (the peer closed
  // the connection). A close alone is no error: a finished peer may close before we look again.
  virtual Status checkAlive() { return Status::Ok(); }
  virtual Status progress(bool* progressed) {
    (void)progressed;
    return Status::Ok();
  }
  virtual void addPollFds(std::vector<pollfd>* fds) { (void)fds; }

 private:
  int peer_;
};

// A rank's peer-mapped window: memory every rank of its host maps, for the direct (one-shot and
// two-shot) algorithms, which read their peers' data in place. Two halves, so that consecutive calls
// use different memory; a flag only its owner raises says how far the owner has got.
class PeerWindow {
 public:
  virtual ~PeerWindow() = default;
  virtual char* half(int h) = 0;  // h: 0 or 1
  virtual size_t halfBytes() const = 0;
  virtual uint64_t flag() const = 0;  // acquire: what the owner wrote before raising it is visible
  virtual void raise(uint64_t value) = 0;  // owner only; release
  // What the owner's call using half h put there (its element count and type), set before the flag is raised
  // and read after it: a peer compares it with its own call's, so that ranks passing different counts fail.
  virtual uint64_t shape(int h) const = 0;
  virtual void setShape(int h, uint64_t value) = 0;  // owner only
  virtual void wake() = 0;  // rings the owner's doorbell, after raising our own flag

  // Cross-memory attach (the direct algorithms above the window's size): the owner publishes the buffers of its call
  // using half h before it raises the flag; a peer that reaches the owner's memory copies from and to them in place.
  // `buf` is 0 for the call's send buffer, 1 for its receive buffer; `offset` is in bytes.
  virtual void publishBuffers(int h, const void* send, void* recv) {
    (void)h;
    (void)send;
    (void)recv;
  }
  virtual Status readPeer(int h, int buf, uint64_t offset, void* dst, size_t bytes) {
    (void)h, (void)buf, (void)offset, (void)dst, (void)bytes;
    return MakeError(strataInternalError, "this window's owner cannot be reached by cross-memory attach");
  }
  virtual Status writePeer(int h, int buf, uint64_t offset, const void* src, size_t bytes) {
    (void)h, (void)buf, (void)offset, (void)src, (void)bytes;
    return MakeError(strataInternalError, "this window's owner cannot be reached by cross-memory attach");
  }
  // Where the owner is this process, or its buffer was allocated by strataMemAlloc, its bytes [offset, offset + bytes)
  // as mapped in this process (*at), for the caller to load from and store to; *at is nullptr where they are reached
  // by readPeer and writePeer only.
  virtual Status mapPeer(int h, int buf, uint64_t offset, size_t bytes, char** at) {
    (void)h, (void)buf, (void)offset, (void)bytes;
    *at = nullptr;
    return Status::Ok();
  }
};

// How the executor finds connections: per channel and peer.
class ConnectionTable {
 public:
  virtual ~ConnectionTable() = default;
  virtual SendConnection* sendTo(int channel, int peer) = 0;
  virtual RecvConnection* recvFrom(int channel, int peer) = 0;
  // The window of `rank` (this rank's own included), or nullptr when it cannot be mapped here.
  virtual PeerWindow* windowOf(int rank) {
    (void)rank;
    return nullptr;
  }
};

}  // namespace strata
