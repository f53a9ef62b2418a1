#include "transport/net/tcp/tcp_transport.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "core/log.h"
#include "transport/net/tcp/tcp_connection.h"

namespace strata {


TcpTransport::~TcpTransport() {
  closeListener();
  for (auto& b : bundles_)
    for (int fd : b.second) close(fd);
}

void TcpTransport::closeListener() { CloseFd(&listenFd_); }

Status TcpTransport::listen(uint32_t ip) {
  SockAddr want;
  want.ip = ip;
  STRATA_CHECK(ListenTcp(want, &listenFd_, &addr_));
  return Status::Ok();
}

Status TcpTransport::connectAll(const TcpSetup& setup, const std::map<int, SockAddr>& peers, Deadline deadline) {
  setup_ = setup;
  const int k = setup.nsocks, nch = setup.nchannels;
  int expected = 0;
  for (const auto& p : peers) {
    for (int c = 0; c < nch; ++c) bundles_[{p.first, c}].assign(k, -1);
    if (p.first > setup.myRank) expected += k * nch;
  }
  // Connect to lower ranks first: their listeners' backlogs complete the connections without them
  // calling accept, so no pair waits on the other.
  for (const auto& p : peers) {
    if (p.first > setup.myRank) continue;
    for (int c = 0; c < nch; ++c) {
      for (int s = 0; s < k; ++s) {
        int fd = -1;
        STRATA_CHECK(ConnectTcp(p.second, deadline, &fd));
        const AuthHello h = MakeAuthHello(setup.secret, AuthPurpose::Data, setup.myRank, setup.nranks, p.first, c, s);
        Status st = SendAll(fd, &h, sizeof(h), deadline);
        if (!st.ok()) {
          close(fd);
          return st;
        }
        SetNonBlocking(fd);
        bundles_[{p.first, c}][s] = fd;
      }
    }
  }
  AuthAcceptor acceptor(listenFd_, setup.secret, AuthPurpose::Data, "TCP listener");
  while (expected > 0) {
    int fd = -1;
    AuthHello h{};
    Status st = acceptor.next(deadline, &fd, &h);
    if (!st.ok()) {
      std::string missing;
      for (const auto& b : bundles_) {
        if (b.first.first <= setup.myRank) continue;
        const bool complete = std::find(b.second.begin(), b.second.end(), -1) == b.second.end();
        const std::string r = std::to_string(b.first.first);
        if (!complete && missing.find("rank " + r + ",") == std::string::npos) missing += "rank " + r + ", ";
      }
      return MakeError(st.code(), "rank %d: %d TCP connections never arrived (from %sand %d stranger(s) dropped): %s",
                       setup.myRank, expected, missing.c_str(), acceptor.dropped(), st.message().c_str());
    }
    // Authenticated: a rank of this job, but it must be one this rank expects, once.
    auto it = bundles_.find({h.fromRank, h.channel});
    const bool valid = h.toRank == setup.myRank && h.nranks == setup.nranks && h.fromRank > setup.myRank &&
                       it != bundles_.end() && h.sock >= 0 && h.sock < k && it->second[h.sock] < 0;
    if (!valid) {
      STRATA_LOG(WARN, NET, "dropped an authenticated TCP connection for rank %d from rank %d (channel %d, socket %d): "
                 "not one this rank expects", h.toRank, h.fromRank, h.channel, h.sock);
      close(fd);
      continue;
    }
    SetNonBlocking(fd);
    it->second[h.sock] = fd;
    --expected;
  }
  if (acceptor.dropped() > 0)
    STRATA_LOG(WARN, NET, "the TCP listener dropped %d connection(s) that did not authenticate", acceptor.dropped());
  return Status::Ok();
}

std::unique_ptr<SendConnection> TcpTransport::makeSend(int channel, int peer) {
  auto it = bundles_.find({peer, channel});
  if (it == bundles_.end()) return nullptr;
  return std::make_unique<TcpSendConnection>(peer, it->second, setup_.nslots, setup_.slotBytes);
}

std::unique_ptr<RecvConnection> TcpTransport::makeRecv(int channel, int peer) {
  auto it = bundles_.find({peer, channel});
  if (it == bundles_.end()) return nullptr;
  return std::make_unique<TcpRecvConnection>(peer, it->second, setup_.nslots, setup_.slotBytes);
}

}  // namespace strata
