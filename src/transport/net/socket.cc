#include "transport/net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace strata {

std::string SockAddr::str() const {
  char buf[INET_ADDRSTRLEN] = "?";
  in_addr a;
  a.s_addr = ip;
  inet_ntop(AF_INET, &a, buf, sizeof(buf));
  return std::string(buf) + ":" + std::to_string(port);
}

Status ParseHostPort(const std::string& text, SockAddr* out) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    return MakeError(strataInvalidArgument, "address '%s' is not host:port", text.c_str());
  std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  char* end = nullptr;
  long p = strtol(port.c_str(), &end, 10);
  if (*end != '\0' || p < 0 || p > 65535)
    return MakeError(strataInvalidArgument, "address '%s' has an invalid port", text.c_str());
  in_addr a;
  if (inet_pton(AF_INET, host.c_str(), &a) != 1) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
    if (rc != 0 || !res)
      return MakeError(strataInvalidArgument, "cannot resolve host '%s': %s", host.c_str(), gai_strerror(rc));
    a = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
    freeaddrinfo(res);
  }
  out->ip = a.s_addr;
  out->port = static_cast<uint16_t>(p);
  return Status::Ok();
}

namespace {
sockaddr_in ToSockaddr(const SockAddr& a) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = a.ip;
  sa.sin_port = htons(a.port);
  return sa;
}

Status WaitFd(int fd, short events, Deadline deadline, const char* what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int ms = deadline.remainingMs(100);
    int rc = poll(&p, 1, ms);
    if (rc > 0) return Status::Ok();
    if (rc < 0 && errno != EINTR) return MakeSysError(errno, "poll while %s", what);
    if (deadline.expired()) return MakeError(strataTimeout, "timed out while %s", what);
  }
}
}  // namespace

Status ListenTcp(const SockAddr& bindAddr, int* fd, SockAddr* bound) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return MakeSysError(errno, "socket");
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in sa = ToSockaddr(bindAddr);
  if (bind(s, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    int err = errno;
    close(s);
    return MakeSysError(err, "bind to %s", bindAddr.str().c_str());
  }
  if (listen(s, 4096) != 0) {
    int err = errno;
    close(s);
    return MakeSysError(err, "listen on %s", bindAddr.str().c_str());
  }
  socklen_t len = sizeof(sa);
  getsockname(s, reinterpret_cast<sockaddr*>(&sa), &len);
  bound->ip = sa.sin_addr.s_addr;
  bound->port = ntohs(sa.sin_port);
  *fd = s;
  return Status::Ok();
}

Status ConnectTcp(const SockAddr& addr, Deadline deadline, int* fd) {
  int delayUs = 200;
  for (;;) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return MakeSysError(errno, "socket");
    sockaddr_in sa = ToSockaddr(addr);
    if (connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0) {
      SetNoDelay(s);
      *fd = s;
      return Status::Ok();
    }
    int err = errno;
    close(s);
    if (err != ECONNREFUSED && err != ETIMEDOUT && err != EINTR && err != ENETUNREACH && err != EHOSTUNREACH)
      return MakeSysError(err, "connect to %s", addr.str().c_str());
    if (deadline.expired())
      return MakeError(strataTimeout, "timed out connecting to %s (last error: %s)", addr.str().c_str(),
                       strerror(err));
    std::this_thread::sleep_for(std::chrono::microseconds(delayUs));
    if (delayUs < 20000) delayUs *= 2;
  }
}

Status AcceptTcp(int listenFd, Deadline deadline, int* fd) {
  STRATA_CHECK(WaitFd(listenFd, POLLIN, deadline, "waiting for a connection"));
  int s = accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
  if (s < 0) return MakeSysError(errno, "accept");
  SetNoDelay(s);
  *fd = s;
  return Status::Ok();
}

Status SendAll(int fd, const void* buf, size_t len, Deadline deadline) {
  const char* p = static_cast<const char*>(buf);
  while (len > 0) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      len -= n;
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return MakeSysError(errno, "send");
    STRATA_CHECK(WaitFd(fd, POLLOUT, deadline, "sending"));
  }
  return Status::Ok();
}

Status RecvAll(int fd, void* buf, size_t len, Deadline deadline) {
  char* p = static_cast<char*>(buf);
  while (len > 0) {
    ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      len -= n;
      continue;
    }
    if (n == 0) return MakeError(strataRemoteError, "connection closed by the peer");
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return MakeSysError(errno, "recv");
    STRATA_CHECK(WaitFd(fd, POLLIN, deadline, "receiving"));
  }
  return Status::Ok();
}

Status InterfaceAddress(const std::string& ifname, uint32_t* ip) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return MakeSysError(errno, "getifaddrs");
  bool found = false;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && ifname == i->ifa_name) {
      *ip = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr;
      found = true;
      break;
    }
  }
  freeifaddrs(list);
  if (!found)
    return MakeError(strataInvalidArgument, "STRATA_SOCKET_IFNAME=%s: no such interface with an IPv4 address",
                     ifname.c_str());
  return Status::Ok();
}

Status LocalAddress(int fd, uint32_t* ip) {
  sockaddr_in sa{};
  socklen_t len = sizeof(sa);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return MakeSysError(errno, "getsockname");
  *ip = sa.sin_addr.s_addr;
  return Status::Ok();
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

}  // namespace strata
