// TCP socket helpers shared by the bootstrap and the TCP transport. Every blocking operation takes
// a deadline.
#pragma once

#include <cstdint>
#include <string>

#include "core/deadline.h"
#include "core/status.h"

namespace strata {

struct SockAddr {
  uint32_t ip = 0;    // network byte order
  uint16_t port = 0;  // host byte order
  std::string str() const;
};

// "host:port" with an IPv4 address or a name resolved to one.
Status ParseHostPort(const std::string& text, SockAddr* out);
Status ListenTcp(const SockAddr& bindAddr, int* fd, SockAddr* bound);
// Retries while the peer is not listening yet, until the deadline.
Status ConnectTcp(const SockAddr& addr, Deadline deadline, int* fd);
Status AcceptTcp(int listenFd, Deadline deadline, int* fd);
Status SendAll(int fd, const void* buf, size_t len, Deadline deadline);
Status RecvAll(int fd, void* buf, size_t len, Deadline deadline);
// IPv4 address of a network interface (STRATA_SOCKET_IFNAME).
Status InterfaceAddress(const std::string& ifname, uint32_t* ip);
// Local IPv4 address of a connected socket: the interface that reaches the peer.
Status LocalAddress(int fd, uint32_t* ip);
void SetNonBlocking(int fd);
void SetNoDelay(int fd);
void CloseFd(int* fd);

}  // namespace strata
