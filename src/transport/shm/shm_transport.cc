#include "transport/shm/shm_transport.h"

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
