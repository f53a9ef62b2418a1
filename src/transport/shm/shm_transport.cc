#include "transport/shm/shm_transport.h"

#include <sys/mman.h>

#include "transport/shm/shm_connection.h"

namespace strata {

// A window inside a mapped segment: the halves after the header, the flag in the header.
class ShmTransport::Window : public PeerWindow {
 public:
  Window(const ShmSegment& seg, const ShmLayout& layout)
      : base_(static_cast<char*>(seg.base()) + layout.windowOffset()),
        bytes_(layout.windowBytes),
        flag_(reinterpret_cast<std::atomic<uint64_t>*>(static_cast<char*>(seg.base()) + ShmLayout::kWindowFlagOffset)),
        shape_(flag_ + 1),
        bell_(static_cast<Doorbell*>(seg.base())) {}
  char* half(int h) override { return base_ + (h & 1) * bytes_; }
  size_t halfBytes() const override { return bytes_; }
  uint64_t flag() const override { return flag_->load(std::memory_order_acquire); }
  void raise(uint64_t value) override { flag_->store(value, std::memory_order_release); }
  void wake() override { bell_->ring(); }
  // Ordered by the flag: stored before the owner's release, loaded after the reader's acquire.
  uint64_t shape(int h) const override { return shape_[h & 1].load(std::memory_order_relaxed); }
  void setShape(int h, uint64_t value) override { shape_[h & 1].store(value, std::memory_order_relaxed); }

 private:
  char* base_;
  size_t bytes_;
  std::atomic<uint64_t>* flag_;
  std::atomic<uint64_t>* shape_;  // two words after the flag, one per half
  Doorbell* bell_;
};

static_assert(sizeof(Doorbell) <= ShmLayout::kWindowFlagOffset, "the window flag follows the doorbell");

ShmTransport::ShmTransport() = default;
ShmTransport::~ShmTransport() = default;

Status ShmTransport::createOwn(const std::string& name, const ShmLayout& layout, int myLocal, int myRank) {
  layout_ = layout;
  myLocal_ = myLocal;
  myRank_ = myRank;
  STRATA_CHECK(own_.create(name, layout.totalBytes()));
  if (layout.windowBytes) ownWindow_ = std::make_unique<Window>(own_, layout_);
  return Status::Ok();
}

Status ShmTransport::attachPeer(int peerRank, int peerLocal, const std::string& name) {
  auto seg = std::make_unique<ShmSegment>();
  STRATA_CHECK(seg->open(name, layout_.totalBytes()));
  std::unique_ptr<Window> window;
  if (layout_.windowBytes) window = std::make_unique<Window>(*seg, layout_);
  peers_.push_back(Peer{peerRank, peerLocal, std::move(seg), std::move(window)});
  return Status::Ok();
}

PeerWindow* ShmTransport::window(int rank) {
  if (rank == myRank_) return ownWindow_.get();
  const Peer* p = find(rank);
  return p ? p->window.get() : nullptr;
}

SlotFifo ShmTransport::fifoIn(const ShmSegment& s, int senderLocal, int channel) const {
  return SlotFifo::At(static_cast<char*>(s.base()) + layout_.fifoOffset(senderLocal, channel), layout_.nslots,
                      layout_.slotBytes);
}

const ShmTransport::Peer* ShmTransport::find(int rank) const {
  for (const Peer& p : peers_)
    if (p.rank == rank) return &p;
  return nullptr;
}

namespace {
void PrefaultRange(char* base, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  if (madvise(base, bytes, MADV_POPULATE_WRITE) == 0) return;
#endif
  // Older kernels: touch each page. The memory holds no data yet, so writing zeros is harmless.
  for (size_t off = 0; off < bytes; off += 4096) reinterpret_cast<volatile char*>(base)[off] = 0;
}
}  // namespace

void ShmTransport::prefault(int channel, int peerRank) {
  const Peer* p = find(peerRank);
  if (!p) return;
  const size_t bytes = static_cast<size_t>(layout_.nslots) * layout_.slotBytes;
  PrefaultRange(fifoIn(own_, p->local, channel).slots, bytes);
  PrefaultRange(fifoIn(*p->seg, myLocal_, channel).slots, bytes);
}

std::unique_ptr<SendConnection> ShmTransport::makeSend(int channel, int peerRank) {
  const Peer* p = find(peerRank);
  if (!p) return nullptr;
  return std::make_unique<ShmSendConnection>(peerRank, fifoIn(*p->seg, myLocal_, channel), BellOf(*p->seg));
}

std::unique_ptr<RecvConnection> ShmTransport::makeRecv(int channel, int peerRank) {
  const Peer* p = find(peerRank);
  if (!p) return nullptr;
  return std::make_unique<ShmRecvConnection>(peerRank, fifoIn(own_, p->local, channel), BellOf(*p->seg));
}

}  // namespace strata
