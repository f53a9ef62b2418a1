#include "transport/net/auth.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/log.h"
#include "transport/net/socket.h"

namespace strata {

namespace {
inline uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
inline uint64_t Load64(const uint8_t* p) {
  uint64_t x = 0;
  for (int i = 7; i >= 0; --i) x = (x << 8) | p[i];  // little endian whatever the host
  return x;
}

void FillNonce(uint8_t* nonce, size_t len) {
  static thread_local uint64_t counter = 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  ssize_t got = fd >= 0 ? read(fd, nonce, len) : -1;
  if (fd >= 0) close(fd);
  if (got != static_cast<ssize_t>(len)) {  // still unique: time, pid and a counter
    const uint64_t parts[2] = {NowNs() ^ (static_cast<uint64_t>(getpid()) << 40), ++counter};
    memcpy(nonce, parts, len < sizeof(parts) ? len : sizeof(parts));
  }
}
}  // namespace

uint64_t SipHash24(const uint8_t key[kSecretBytes], const void* data, size_t len) {
  const uint64_t k0 = Load64(key), k1 = Load64(key + 8);
  uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
  uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
  auto round = [&] {
    v0 += v1, v1 = Rotl(v1, 13), v1 ^= v0, v0 = Rotl(v0, 32);
    v2 += v3, v3 = Rotl(v3, 16), v3 ^= v2;
    v0 += v3, v3 = Rotl(v3, 21), v3 ^= v0;
    v2 += v1, v1 = Rotl(v1, 17), v1 ^= v2, v2 = Rotl(v2, 32);
  };
  const uint8_t* p = static_cast<const uint8_t*>(data);
  const size_t blocks = len / 8;
  for (size_t i = 0; i < blocks; ++i) {
    const uint64_t m = Load64(p + 8 * i);
    v3 ^= m;
    round(), round();
    v0 ^= m;
  }
  uint64_t b = static_cast<uint64_t>(len) << 56;
  for (size_t j = 0; j < len % 8; ++j) b |= static_cast<uint64_t>(p[8 * blocks + j]) << (8 * j);
  v3 ^= b;
  round(), round();
  v0 ^= b;
  v2 ^= 0xff;
  round(), round(), round(), round();
  return v0 ^ v1 ^ v2 ^ v3;
}

AuthHello MakeAuthHello(const uint8_t secret[kSecretBytes], AuthPurpose purpose, int fromRank, int nranks, int toRank,
                        int channel, int sock) {
  AuthHello h{};
  h.magic = kAuthMagic;
  h.version = kAuthVersion;
  h.purpose = static_cast<uint32_t>(purpose);
  h.fromRank = fromRank;
  h.nranks = nranks;
  h.toRank = toRank;
  h.channel = channel;
  h.sock = sock;
  FillNonce(h.nonce, sizeof(h.nonce));
  h.mac = SipHash24(secret, &h, offsetof(AuthHello, mac));
  return h;
}

Status VerifyAuthHello(const void* bytes, size_t len, const uint8_t secret[kSecretBytes], AuthPurpose purpose,
                       AuthHello* out) {
  STRATA_REQUIRE(len == sizeof(AuthHello), strataRemoteError, "handshake of %zu bytes, expected %zu", len,
                 sizeof(AuthHello));
  AuthHello h;
  memcpy(&h, bytes, sizeof(h));
  STRATA_REQUIRE(h.magic == kAuthMagic, strataRemoteError, "not a strata handshake (magic 0x%08x)", h.magic);
  STRATA_REQUIRE(h.version == kAuthVersion, strataRemoteError, "handshake version %u, this library speaks %u",
                 h.version, kAuthVersion);
  STRATA_REQUIRE(h.purpose == static_cast<uint32_t>(purpose), strataRemoteError,
                 "handshake for purpose %u on a port that serves %u", h.purpose, static_cast<uint32_t>(purpose));
  STRATA_REQUIRE(SipHash24(secret, &h, offsetof(AuthHello, mac)) == h.mac, strataRemoteError,
                 "handshake MAC does not match: the peer does not know this job's secret");
  *out = h;
  return Status::Ok();
}

uint64_t AuthReplyMac(const uint8_t secret[kSecretBytes], const AuthHello& hello) {
  struct {
    uint32_t purpose;
    uint32_t pad;
    uint8_t nonce[16];
  } msg{static_cast<uint32_t>(AuthPurpose::RootReply), 0, {}};
  memcpy(msg.nonce, hello.nonce, sizeof(msg.nonce));
  return SipHash24(secret, &msg, sizeof(msg));
}

AuthAcceptor::AuthAcceptor(int listenFd, const uint8_t secret[kSecretBytes], AuthPurpose purpose, const char* who)
    : listenFd_(listenFd), purpose_(purpose), who_(who) {
  memcpy(secret_, secret, kSecretBytes);
}

AuthAcceptor::~AuthAcceptor() {
  for (Pending& p : pending_) close(p.fd);
}

void AuthAcceptor::drop(size_t i, const char* why) {
  STRATA_LOG(WARN, NET, "%s dropped a connection that did not authenticate: %s", who_, why);
  close(pending_[i].fd);
  pending_.erase(pending_.begin() + i);
  ++dropped_;
}

void AuthAcceptor::acceptNew() {
  for (;;) {
    int fd = accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN (nothing more queued) or a transient error: poll again
    if (pending_.size() >= kMaxPending) drop(0, "too many connections waiting to authenticate");
    Pending p;
    p.fd = fd;
    p.got = 0;
    p.until = Deadline::After(kHelloWindowMs);
    pending_.push_back(p);
  }
}

Status AuthAcceptor::next(Deadline deadline, int* fd, AuthHello* hello) {
  const int flags = fcntl(listenFd_, F_GETFL);
  if (!(flags & O_NONBLOCK)) fcntl(listenFd_, F_SETFL, flags | O_NONBLOCK);
  std::vector<pollfd> fds;
  for (;;) {
    for (size_t i = 0; i < pending_.size();) {
      if (pending_[i].until.expired()) {
        drop(i, "it sent no complete handshake in time");
        continue;
      }
      ++i;
    }
    fds.clear();
    fds.push_back(pollfd{listenFd_, POLLIN, 0});
    for (const Pending& p : pending_) fds.push_back(pollfd{p.fd, POLLIN, 0});
    const int rc = poll(fds.data(), fds.size(), deadline.remainingMs(100));
    if (rc < 0 && errno != EINTR) return MakeSysError(errno, "poll on the %s's listener", who_);
    // Read pending hellos before accepting more, so the indices of fds stay those of pending_.
    for (size_t k = fds.size() - 1; k >= 1; --k) {
      if (!fds[k].revents) continue;
      const size_t i = k - 1;
      Pending& p = pending_[i];
      const ssize_t n = recv(p.fd, p.buf + p.got, sizeof(p.buf) - p.got, MSG_DONTWAIT);
      if (n == 0) {
        drop(i, "it closed the connection before a complete handshake");
        continue;
      }
      if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) drop(i, strerror(errno));
        continue;
      }
      p.got += n;
      if (p.got < sizeof(p.buf)) continue;
      AuthHello h;
      Status st = VerifyAuthHello(p.buf, sizeof(p.buf), secret_, purpose_, &h);
      if (!st.ok()) {
        drop(i, st.message().c_str());
        continue;
      }
      *fd = p.fd;
      *hello = h;
      pending_.erase(pending_.begin() + i);
      fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK);
      SetNoDelay(*fd);
      return Status::Ok();
    }
    if (fds[0].revents) acceptNew();
    if (deadline.expired()) return MakeError(strataTimeout, "timed out waiting for connections on the %s", who_);
  }
}

}  // namespace strata
