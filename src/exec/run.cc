#include "exec/run.h"

#include <algorithm>

namespace strata {

Status ConnectStep(ConnectionTable* conns, int channel, int sendPeer, int recvPeer,
                   std::vector<SendConnection*>* sendConns, std::vector<RecvConnection*>* recvConns,
                   SendConnection** send, RecvConnection** recv) {
  *send = nullptr;
  *recv = nullptr;
  if (sendPeer >= 0) {
    *send = conns->sendTo(channel, sendPeer);
    STRATA_REQUIRE(*send, strataInternalError, "no connection to rank %d on channel %d", sendPeer, channel);
    if (std::find(sendConns->begin(), sendConns->end(), *send) == sendConns->end()) sendConns->push_back(*send);
  }
  if (recvPeer >= 0) {
    *recv = conns->recvFrom(channel, recvPeer);
    STRATA_REQUIRE(*recv, strataInternalError, "no connection from rank %d on channel %d", recvPeer, channel);
    if (std::find(recvConns->begin(), recvConns->end(), *recv) == recvConns->end()) recvConns->push_back(*recv);
  }
  return Status::Ok();
}

bool PollConnections(const std::vector<RecvConnection*>& recv, const std::vector<SendConnection*>& send,
                     std::vector<pollfd>* fds) {
  const size_t before = fds->size();
  for (RecvConnection* c : recv) c->addPollFds(fds);
  for (SendConnection* c : send) c->addPollFds(fds);
  return fds->size() > before;
}

Status ProgressSends(const std::vector<SendConnection*>& send, bool* progressed, bool* flushed) {
  bool all = true;
  for (SendConnection* c : send) {
    STRATA_CHECK(c->progress(progressed));
    all = all && c->flushed();
  }
  *flushed = all;
  return Status::Ok();
}

void AddDistinct(std::string* list, const std::string& item) {
  if (list->find(item) != std::string::npos) return;
  if (!list->empty()) *list += ", ";
  *list += item;
}

void AddUndelivered(const std::vector<SendConnection*>& send, std::string* list) {
  for (SendConnection* c : send)
    if (!c->flushed()) AddDistinct(list, "delivery to rank " + std::to_string(c->peer()));
}

void AddUndelivered(const std::vector<SendConnection*>& send, std::vector<int>* peers) {
  for (SendConnection* c : send)
    if (!c->flushed()) peers->push_back(c->peer());
}

std::vector<int> SortedPeers(std::vector<int> peers) {
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

}  // namespace strata
