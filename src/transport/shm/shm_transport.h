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
  size_t windowBytes = 0;  // each half of the peer-mapped window; 0: none

  // The header holds the doorbell and, at kWindowFlagOffset, the window's flag, its shape words, the buffers its
  // owner published and what a peer needs to reach them by cross-memory attach.
  static constexpr size_t kWindowFlagOffset = 128;
  // A word its owner sets once it has left the communicator (markDeparted), after the window's words.
  static constexpr size_t kDepartedOffset = 1024;
  size_t headerBytes() const { return 4096; }
  size_t windowOffset() const { return headerBytes(); }
  size_t fifoBytes() const { return SlotFifo::BytesFor(nslots, slotBytes); }
  size_t totalBytes() const {
    return headerBytes() + 2 * windowBytes + static_cast<size_t>(nLocal) * nchannels * fifoBytes();
  }
  size_t fifoOffset(int senderLocal, int channel) const {
    return headerBytes() + 2 * windowBytes + (static_cast<size_t>(senderLocal) * nchannels + channel) * fifoBytes();
  }
};

class ShmTransport {
 public:
  ShmTransport();
  ~ShmTransport();
  Status createOwn(const std::string& name, const ShmLayout& layout, int myLocal, int myRank);
  Status attachPeer(int peerRank, int peerLocal, const std::string& name);
  void unlinkOwn() { own_.unlink(); }

  // Faults in the pages of both FIFOs between this rank and the peer, so the first collectives do not
  // pay for them. Call before any data moves.
  void prefault(int channel, int peerRank);

  std::unique_ptr<SendConnection> makeSend(int channel, int peerRank);
  std::unique_ptr<RecvConnection> makeRecv(int channel, int peerRank);
  Doorbell* ownBell() const { return BellOf(own_); }
  // The peer-mapped window of `rank` (this rank or an attached peer); nullptr without one.
  PeerWindow* window(int rank);
  // Whether this process can read and write the memory of every attached peer by cross-memory attach
  // (process_vm_readv/writev): the kernel allows it between processes of one user and pid namespace unless a
  // security module or a seccomp filter says otherwise. Probes each peer's window once; false without windows.
  bool reachesPeers() const;
  // Says to the peers that this rank has left the communicator of its own accord (its destruction): a process that
  // exits after that has not died. Set in this rank's own segment, which every peer keeps mapped.
  void markDeparted();
  // Whether attached peer `rank` has said so (false for a rank not attached here). Safe from several threads.
  bool peerDeparted(int rank) const;

 private:
  class Window;
  struct Peer {
    int rank;
    int local;
    std::unique_ptr<ShmSegment> seg;
    std::unique_ptr<Window> window;
  };
  static Doorbell* BellOf(const ShmSegment& s) { return static_cast<Doorbell*>(s.base()); }
  SlotFifo fifoIn(const ShmSegment& s, int senderLocal, int channel) const;
  const Peer* find(int rank) const;

  ShmLayout layout_;
  int myLocal_ = 0;
  ShmSegment own_;
  int myRank_ = -1;
  std::unique_ptr<Window> ownWindow_;
  std::vector<Peer> peers_;
};

}  // namespace strata
