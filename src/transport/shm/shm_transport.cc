#include "transport/shm/shm_transport.h"

#include <sys/mman.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/log.h"
#include "transport/shm/shared_buffers.h"
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
  // Per half and buffer, the strataMemAlloc buffer holding it (id 0: none), and the owner's count of freed ones.
  struct Region {
    std::atomic<uint64_t> id, fd, base, bytes;
  } regions[2][2];
  std::atomic<uint64_t> frees;
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

static_assert(ShmLayout::kWindowFlagOffset + sizeof(WindowHeader) <= ShmLayout::kDepartedOffset,
              "the departed word follows the window's words");
static_assert(ShmLayout::kDepartedOffset + sizeof(std::atomic<uint64_t>) <= 4096, "the departed word fits the header");

namespace {
std::atomic<uint64_t>* DepartedWord(const ShmSegment& seg) {
  return reinterpret_cast<std::atomic<uint64_t>*>(static_cast<char*>(seg.base()) + ShmLayout::kDepartedOffset);
}
}  // namespace

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
  ~Window() override {
    for (MappedRegion& m : mapped_) UnmapPeerSharedBuffer(&m);
  }
  void publishBuffers(int h, const void* send, void* recv) override {
    const void* bufs[2] = {send, recv};
    for (int b = 0; b < 2; ++b) {
      head_->buffers[h & 1][b].store(reinterpret_cast<uint64_t>(bufs[b]), std::memory_order_relaxed);
      SharedRegion r;
      const bool shared = FindSharedBuffer(bufs[b], &r);
      WindowHeader::Region& out = head_->regions[h & 1][b];
      out.id.store(shared ? r.id : 0, std::memory_order_relaxed);
      out.fd.store(static_cast<uint64_t>(r.fd), std::memory_order_relaxed);
      out.base.store(r.base, std::memory_order_relaxed);
      out.bytes.store(r.bytes, std::memory_order_relaxed);
    }
    head_->frees.store(SharedBufferFrees(), std::memory_order_relaxed);
  }
  Status readPeer(int h, int buf, uint64_t offset, void* dst, size_t bytes) override {
    return copyPeer(h, buf, offset, dst, bytes, false);
  }
  Status writePeer(int h, int buf, uint64_t offset, const void* src, size_t bytes) override {
    return copyPeer(h, buf, offset, const_cast<void*>(src), bytes, true);
  }
  // The owner's own buffers are in this process; a peer's from strataMemAlloc are mapped on first use and kept
  // (kMaxMapped at most, the least recently used dropped; all but this call's once the owner frees any).
  Status mapPeer(int h, int buf, uint64_t offset, size_t bytes, char** at) override {
    const uint64_t addr = head_->buffers[h & 1][buf & 1].load(std::memory_order_relaxed);
    *at = nullptr;
    if (own_) {
      *at = reinterpret_cast<char*>(addr) + offset;
      return Status::Ok();
    }
    const WindowHeader::Region& pub = head_->regions[h & 1][buf & 1];
    SharedRegion r;
    r.id = pub.id.load(std::memory_order_relaxed);
    if (r.id == 0) return Status::Ok();
    r.fd = static_cast<int>(pub.fd.load(std::memory_order_relaxed));
    r.base = pub.base.load(std::memory_order_relaxed);
    r.bytes = pub.bytes.load(std::memory_order_relaxed);
    const uint64_t from = addr - r.base + offset;
    STRATA_REQUIRE(from + bytes <= r.bytes, strataInvalidUsage,
                   "rank %d's buffer from strataMemAlloc holds %llu bytes from %#llx, and this call reaches %llu bytes "
                   "into it (is its buffer as large as the count and datatype say?)",
                   rank_, static_cast<unsigned long long>(r.bytes), static_cast<unsigned long long>(r.base),
                   static_cast<unsigned long long>(from + bytes));
    const MappedRegion& m = mappingOf(h, r);
    if (m.base) *at = m.base + from;
    return Status::Ok();
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
  static constexpr size_t kMaxMapped = 16;

  // readPeer (write false: into `local`) and writePeer (from it): by loads and stores where the buffer is mapped here,
  // else by cross-memory attach.
  Status copyPeer(int h, int buf, uint64_t offset, void* local, size_t bytes, bool write) {
    char* mapped = nullptr;
    STRATA_CHECK(mapPeer(h, buf, offset, bytes, &mapped));
    if (mapped) {
      if (write)
        std::memcpy(mapped, local, bytes);
      else
        std::memcpy(local, mapped, bytes);
      return Status::Ok();
    }
    const uint64_t at = head_->buffers[h & 1][buf & 1].load(std::memory_order_relaxed) + offset;
    return CrossMemoryCopy(static_cast<pid_t>(head_->pid), write, local, at, bytes, rank_);
  }

  // The mapping of the owner's buffer `r`, published in half `h` for this call, mapped now if need be (base nullptr
  // where it cannot be: the copies then go by cross-memory attach).
  const MappedRegion& mappingOf(int h, const SharedRegion& r) {
    const uint64_t frees = head_->frees.load(std::memory_order_relaxed);
    if (frees != seenFrees_) {  // drop what the owner may have freed: everything but this call's buffers
      seenFrees_ = frees;
      // Not the other half's: it names the buffers of the last call that published there, which need not be the call
      // before (a call whose plan does not reach its peers' buffers publishes nothing) and may have been freed since.
      auto published = [this, h](uint64_t id) {
        for (auto& b : head_->regions[h & 1])
          if (b.id.load(std::memory_order_relaxed) == id) return true;
        return false;
      };
      for (size_t i = mapped_.size(); i-- > 0;) {
        if (published(mapped_[i].id)) continue;
        UnmapPeerSharedBuffer(&mapped_[i]);
        mapped_.erase(mapped_.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    for (size_t i = 0; i < mapped_.size(); ++i) {
      if (mapped_[i].id != r.id) continue;
      std::rotate(mapped_.begin(), mapped_.begin() + static_cast<std::ptrdiff_t>(i),
                  mapped_.begin() + static_cast<std::ptrdiff_t>(i) + 1);  // most recent first
      return mapped_[0];
    }
    MappedRegion m;
    const Status st = MapPeerSharedBuffer(static_cast<pid_t>(head_->pid), r, &m);
    if (!st.ok()) {
      STRATA_LOG(WARN, SHM,
                 "rank %d's buffer from strataMemAlloc could not be mapped (%s): cross-memory attach reaches it", rank_,
                 st.message().c_str());
      m.id = r.id;  // remembered, so that it is not tried again
      m.bytes = r.bytes;
    }
    if (mapped_.size() == kMaxMapped) {
      UnmapPeerSharedBuffer(&mapped_.back());
      mapped_.pop_back();
    }
    mapped_.insert(mapped_.begin(), m);
    return mapped_[0];
  }

  WindowHeader* head_;
  Doorbell* bell_;
  int rank_;
  bool own_;
  std::vector<MappedRegion> mapped_;  // a peer's view: its buffers from strataMemAlloc, most recently used first
  uint64_t seenFrees_ = 0;
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

void ShmTransport::markDeparted() {
  if (own_.base()) DepartedWord(own_)->store(1, std::memory_order_release);
}

bool ShmTransport::peerDeparted(int rank) const {
  const Peer* p = find(rank);
  return p && p->seg && p->seg->base() && DepartedWord(*p->seg)->load(std::memory_order_acquire) != 0;
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
