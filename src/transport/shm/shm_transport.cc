#include "transport/shm/shm_transport.h"

#include <sys/mman.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "transport/shm/shm_connection.h"

namespace strata {

namespace {

// The window's words in the segment header, at ShmLayout::kWindowFlagOffset.
struct WindowHeader {
  std::atomic<uint64_t> flag;
  std::atomic<uint64_t> shape[2];       // one per half (PeerWindow::shape)
  std::atomic<uint64_t> buffers[2][2];  // per half: the call's send and receive buffers, in the owner's addresses
  uint64_t pid;                         // the owner's process, as its own pid namespace numbers it
  uint64_t cookie;                      // random: read through cross-memory attach at cookieAddr, it proves the reach
  uint64_t cookieAddr;                  // where the owner maps `cookie`
};

// Moves `bytes` between this process and process `pid` with process_vm_readv/writev (which may move less than asked).
Status CrossMemoryCopy(pid_t pid, bool write, void* local, uint64_t remote, size_t bytes, int rank) {
  char* l = static_cast<char*>(local);
  while (bytes > 0) {
    iovec li{l, bytes}, ri{reinterpret_cast<void*>(remote), bytes};
    const ssize_t n = write ? process_vm_writev(pid, &li, 1, &ri, 1, 0) : process_vm_readv(pid, &li, 1, &ri, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      // The peer's process is gone (ESRCH), or its buffer is not mapped in it for the bytes asked (EFAULT: a count or
      // buffer that disagrees with ours); anything else is the system call's own failure.
      const strataResult_t code = err == ESRCH ? strataRemoteError : err == EFAULT ? strataInvalidUsage
                                                                                   : strataSystemError;
      return MakeError(code, "cross-memory attach: %s %zu bytes %s rank %d's buffer failed: %s%s",
                       write ? "writing" : "reading", bytes, write ? "into" : "from", rank,
                       err ? strerror(err) : "no progress",
                       err == EFAULT ? " (is its buffer as large as the count and datatype say?)" : "");
    }
    l += n;
    remote += static_cast<uint64_t>(n);
    bytes -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

static_assert(ShmLayout::kWindowFlagOffset + sizeof(WindowHeader) <= 4096, "the window header fits the segment header");

// A window inside a mapped segment: the halves after the header, the flag in the header.
class ShmTransport::Window : public PeerWindow {
 public:
  Window(const ShmSegment& seg, const ShmLayout& layout, int rank, bool own)
      : base_(static_cast<char*>(seg.base()) + layout.windowOffset()),
        bytes_(layout.windowBytes),
        head_(reinterpret_cast<WindowHeader*>(static_cast<char*>(seg.base()) + ShmLayout::kWindowFlagOffset)),
        bell_(static_cast<Doorbell*>(seg.base())),
        rank_(rank),
        own_(own) {
    if (own) {
      head_->pid = static_cast<uint64_t>(getpid());
      uint64_t cookie = 0;
      if (getrandom(&cookie, sizeof(cookie), 0) != static_cast<ssize_t>(sizeof(cookie)))
        cookie = static_cast<uint64_t>(getpid()) << 32 ^ static_cast<uint64_t>(time(nullptr));
      head_->cookie = cookie;
      head_->cookieAddr = reinterpret_cast<uint64_t>(&head_->cookie);
    }
  }
  char* half(int h) override { return base_ + (h & 1) * bytes_; }
  size_t halfBytes() const override { return bytes_; }
  uint64_t flag() const override { return head_->flag.load(std::memory_order_acquire); }
  void raise(uint64_t value) override { head_->flag.store(value, std::memory_order_release); }
  void wake() override { bell_->ring(); }
  // Ordered by the flag: stored before the owner's release, loaded after the reader's acquire.
  uint64_t shape(int h) const override { return head_->shape[h & 1].load(std::memory_order_relaxed); }
  void setShape(int h, uint64_t value) override { head_->shape[h & 1].store(value, std::memory_order_relaxed); }
  void publishBuffers(int h, const void* send, void* recv) override {
    head_->buffers[h & 1][0].store(reinterpret_cast<uint64_t>(send), std::memory_order_relaxed);
    head_->buffers[h & 1][1].store(reinterpret_cast<uint64_t>(recv), std::memory_order_relaxed);
  }
  Status readPeer(int h, int buf, uint64_t offset, void* dst, size_t bytes) override {
    const uint64_t at = head_->buffers[h & 1][buf & 1].load(std::memory_order_relaxed) + offset;
    if (own_) {
      std::memcpy(dst, reinterpret_cast<const void*>(at), bytes);
      return Status::Ok();
    }
    return CrossMemoryCopy(static_cast<pid_t>(head_->pid), false, dst, at, bytes, rank_);
  }
  Status writePeer(int h, int buf, uint64_t offset, const void* src, size_t bytes) override {
    const uint64_t at = head_->buffers[h & 1][buf & 1].load(std::memory_order_relaxed) + offset;
    if (own_) {
      std::memcpy(reinterpret_cast<void*>(at), src, bytes);
      return Status::Ok();
    }
    return CrossMemoryCopy(static_cast<pid_t>(head_->pid), true, const_cast<void*>(src), at, bytes, rank_);
  }
  // Reads the owner's cookie through cross-memory attach and writes it back: both directions reach its memory.
  bool reachable() const {
    if (own_) return true;
    uint64_t seen = 0;
    if (!CrossMemoryCopy(static_cast<pid_t>(head_->pid), false, &seen, head_->cookieAddr, sizeof(seen), rank_).ok())
      return false;
    if (seen != head_->cookie) return false;
    return CrossMemoryCopy(static_cast<pid_t>(head_->pid), true, &seen, head_->cookieAddr, sizeof(seen), rank_).ok();
  }

 private:
  char* base_;
  size_t bytes_;
  WindowHeader* head_;
  Doorbell* bell_;
  int rank_;
  bool own_;
};

static_assert(sizeof(Doorbell) <= ShmLayout::kWindowFlagOffset, "the window flag follows the doorbell");

ShmTransport::ShmTransport() = default;
ShmTransport::~ShmTransport() = default;

Status ShmTransport::createOwn(const std::string& name, const ShmLayout& layout, int myLocal, int myRank) {
  layout_ = layout;
  myLocal_ = myLocal;
  myRank_ = myRank;
  STRATA_CHECK(own_.create(name, layout.totalBytes()));
  if (layout.windowBytes) ownWindow_ = std::make_unique<Window>(own_, layout_, myRank, true);
  return Status::Ok();
}

Status ShmTransport::attachPeer(int peerRank, int peerLocal, const std::string& name) {
  auto seg = std::make_unique<ShmSegment>();
  STRATA_CHECK(seg->open(name, layout_.totalBytes()));
  std::unique_ptr<Window> window;
  if (layout_.windowBytes) window = std::make_unique<Window>(*seg, layout_, peerRank, false);
  peers_.push_back(Peer{peerRank, peerLocal, std::move(seg), std::move(window)});
  return Status::Ok();
}

bool ShmTransport::reachesPeers() const {
  if (!ownWindow_) return false;
  for (const Peer& p : peers_)
    if (!p.window || !p.window->reachable()) return false;
  return true;
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
