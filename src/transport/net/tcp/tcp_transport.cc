#include "transport/net/tcp/tcp_transport.h"

#include <unistd.h>

#include <cstring>

#include "core/log.h"
#include "transport/net/tcp/tcp_connection.h"

namespace strata {

namespace {
constexpr uint32_t kHandshakeMagic = 0x53544350;  // "STCP"

struct Handshake {
  uint32_t magic;
  int32_t fromRank;
  int32_t channel;
  int32_t sock;
  uint8_t secret[kSecretBytes];
};

bool SameSecret(const uint8_t* a, const uint8_t* b) {
  uint8_t diff = 0;  // constant time: no early exit on the first differing byte
  for (int i = 0; i < kSecretBytes; ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}
}  // namespace

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
        Handshake h{kHandshakeMagic, setup.myRank, c, s, {}};
        memcpy(h.secret, setup.secret, kSecretBytes);
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
  while (expected > 0) {
    int fd = -1;
    Status st = AcceptTcp(listenFd_, deadline, &fd);
    if (!st.ok())
      return MakeError(st.code(), "rank %d: %d TCP connections from higher ranks never arrived: %s", setup.myRank,
                       expected, st.message().c_str());
    Handshake h{};
    // A stranger that connects and says nothing must not stall the job: give it a short window.
    Deadline shortWait = Deadline::After(std::min(deadline.remainingMs(5000), 5000));
    st = RecvAll(fd, &h, sizeof(h), shortWait);
    auto it = bundles_.find({h.fromRank, h.channel});
    bool valid = st.ok() && h.magic == kHandshakeMagic && SameSecret(h.secret, setup.secret) &&
                 h.fromRank > setup.myRank && it != bundles_.end() && h.sock >= 0 && h.sock < k &&
                 it->second[h.sock] < 0;
    if (!valid) {
      STRATA_LOG(WARN, NET, "dropped a TCP connection that failed the handshake (%s)",
                 st.ok() ? "bad magic, secret, rank or duplicate" : st.message().c_str());
      close(fd);
      continue;
    }
    SetNonBlocking(fd);
    it->second[h.sock] = fd;
    --expected;
  }
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
