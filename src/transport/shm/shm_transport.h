// Shared-memory transport setup for the ranks of one host. Each rank owns one segment: a header
// with its doorbell, then one FIFO per (sending local rank, channel) that it receives on. Peers map
// each other's segments; the owner unlinks its name once every peer has mapped it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/connection.h"
#include "transport/shm/doorbell.h"
#include "transport/shm/shm_segment.h"

namespace strata {

struct ShmLayout {
  int nLocal = 1;  // ranks on this host
  int nchannels = 1;
  int nslots = 8;
  size_t slotBytes = 128 << 10;

  size_t headerBytes() const { return 4096; }
  size_t fifoBytes() const { return SlotFifo::BytesFor(nslots, slotBytes); }
  size_t totalBytes() const { return headerBytes() + static_cast<size_t>(nLocal) * nchannels * fifoBytes(); }
  size_t fifoOffset(int senderLocal, int channel) const {
    return headerBytes() + (static_cast<size_t>(senderLocal) * nchannels + channel) * fifoBytes();
  }
};

class ShmTransport {
 public:
  Status createOwn(const std::string& name, const ShmLayout& layout, int myLocal);
  Status attachPeer(int peerRank, int peerLocal, const std::string& name);
  void unlinkOwn() { own_.unlink(); }

  // Faults in the pages of both FIFOs between this rank and the peer, so the first collectives do not
  // pay for them. Call before any data moves.
  void prefault(int channel, int peerRank);

  std::unique_ptr<SendConnection> makeSend(int channel, int peerRank);
  std::unique_ptr<RecvConnection> makeRecv(int channel, int peerRank);
  Doorbell* ownBell() const { return BellOf(own_); }

 private:
  struct Peer {
    int rank;
    int local;
    std::unique_ptr<ShmSegment> seg;
  };
  static Doorbell* BellOf(const ShmSegment& s) { return static_cast<Doorbell*>(s.base()); }
  SlotFifo fifoIn(const ShmSegment& s, int senderLocal, int channel) const;
  const Peer* find(int rank) const;

  ShmLayout layout_;
  int myLocal_ = 0;
  ShmSegment own_;
  std::vector<Peer> peers_;
};

}  // namespace strata
