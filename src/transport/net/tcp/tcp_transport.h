// TCP transport setup: a listener per rank, then K sockets per (peer, channel). The higher rank of
// a pair connects, the lower accepts; every socket opens with an AuthHello that proves the job's
// secret (net/auth.h), and connections that fail it are dropped and logged.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/deadline.h"
#include "transport/connection.h"
#include "transport/net/auth.h"
#include "transport/net/socket.h"

namespace strata {

struct TcpSetup {
  int myRank = 0;
  int nranks = 1;
  int nchannels = 1;
  int nsocks = 4;
  int nslots = 8;
  size_t slotBytes = 128 << 10;
  uint8_t secret[kSecretBytes] = {};
};

class TcpTransport {
 public:
  ~TcpTransport();
  // Starts listening on `ip` (port chosen by the kernel).
  Status listen(uint32_t ip);
  SockAddr listenAddr() const { return addr_; }
  // Connects to every peer in `peers` (rank -> its listen address).
  Status connectAll(const TcpSetup& setup, const std::map<int, SockAddr>& peers, Deadline deadline);
  void closeListener();

  std::unique_ptr<SendConnection> makeSend(int channel, int peer);
  std::unique_ptr<RecvConnection> makeRecv(int channel, int peer);

 private:
  TcpSetup setup_;
  int listenFd_ = -1;
  SockAddr addr_;
  std::map<std::pair<int, int>, std::vector<int>> bundles_;  // (peer, channel) -> K sockets
};

}  // namespace strata
