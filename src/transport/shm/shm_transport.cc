#include "transport/shm/shm_transport.h"

#include <sys/mman.h>

#include "transport/shm/shm_connection.h"

namespace strata {

Status ShmTransport::createOwn(const std::string& name, const ShmLayout& layout, int myLocal) {
  layout_ = layout;
  myLocal_ = myLocal;
  STRATA_CHECK(own_.create(name, layout.totalBytes()));
  return Status::Ok();
}

Status ShmTransport::attachPeer(int peerRank, int peerLocal, const std::string& name) {
  auto seg = std::make_unique<ShmSegment>();
  STRATA_CHECK(seg->open(name, layout_.totalBytes()));
  peers_.push_back(Peer{peerRank, peerLocal, std::move(seg)});
  return Status::Ok();
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
