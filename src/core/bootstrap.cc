#include "core/bootstrap.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "core/log.h"

namespace strata {

namespace {
constexpr uint32_t kHelloMagic = 0x53544248;  // "STBH"

struct Hello {
  uint32_t magic;
  int32_t rank;
  int32_t nranks;
  uint8_t secret[kSecretBytes];
  PeerInfo info;
};

struct BarrierReply {
  int32_t result;    // strataSuccess when every rank succeeded
  int32_t failedRank;
};

bool SecretMatches(const uint8_t* a, const uint8_t* b) {
  uint8_t d = 0;
  for (int i = 0; i < kSecretBytes; ++i) d |= a[i] ^ b[i];
  return d == 0;
}

void RunRoot(int listenFd, std::vector<uint8_t> secret, int64_t timeoutMs) {
  const Deadline deadline = Deadline::After(timeoutMs);
  int nranks = -1;
  std::vector<int> fds;
  std::vector<PeerInfo> table;
  int joined = 0;
  auto closeAll = [&] {
    for (int& fd : fds) CloseFd(&fd);
    close(listenFd);
  };
  while (nranks < 0 || joined < nranks) {
    int fd = -1;
    Status st = AcceptTcp(listenFd, deadline, &fd);
    if (!st.ok()) {
      STRATA_LOG(WARN, BOOT, "bootstrap root gives up: %d of %d ranks joined (%s)", joined, nranks,
                 st.message().c_str());
      closeAll();
      return;
    }
    Hello h{};
    st = RecvAll(fd, &h, sizeof(h), Deadline::After(std::min<int64_t>(timeoutMs, 5000)));
    bool valid = st.ok() && h.magic == kHelloMagic && SecretMatches(h.secret, secret.data()) && h.nranks > 0 &&
                 (nranks < 0 || h.nranks == nranks) && h.rank >= 0 && h.rank < h.nranks &&
                 (nranks < 0 || fds[h.rank] < 0);
    if (!valid) {
      STRATA_LOG(WARN, BOOT, "bootstrap root dropped a connection (%s)",
                 st.ok() ? "wrong secret, size or duplicate rank" : st.message().c_str());
      close(fd);
      continue;
    }
    if (nranks < 0) {
      nranks = h.nranks;
      fds.assign(nranks, -1);
      table.resize(nranks);
    }
    fds[h.rank] = fd;
    table[h.rank] = h.info;
    ++joined;
  }
  for (int r = 0; r < nranks; ++r) {
    if (!SendAll(fds[r], table.data(), table.size() * sizeof(PeerInfo), deadline).ok())
      STRATA_LOG(WARN, BOOT, "bootstrap root could not send the table to rank %d", r);
  }
  BarrierReply reply{strataSuccess, -1};
  for (int r = 0; r < nranks; ++r) {
    int32_t result = strataInternalError;
    if (!RecvAll(fds[r], &result, sizeof(result), deadline).ok()) result = strataRemoteError;
    if (result != strataSuccess && reply.result == strataSuccess) reply = BarrierReply{result, r};
  }
  for (int r = 0; r < nranks; ++r) (void)SendAll(fds[r], &reply, sizeof(reply), deadline);
  closeAll();
}
}  // namespace

void RandomBytes(void* buf, size_t len) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  size_t got = 0;
  if (fd >= 0) {
    while (got < len) {
      ssize_t n = read(fd, static_cast<char*>(buf) + got, len - got);
      if (n <= 0) break;
      got += n;
    }
    close(fd);
  }
  if (got < len) {
    uint64_t x = NowNs() ^ (static_cast<uint64_t>(getpid()) << 32);
    for (size_t i = got; i < len; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(x);
    }
  }
}

void EncodeUniqueId(const UniqueIdData& data, strataUniqueId* id) {
  memset(id, 0, sizeof(*id));
  memcpy(id->internal, &data, sizeof(data));
}

Status DecodeUniqueId(const strataUniqueId& id, UniqueIdData* data) {
  memcpy(data, id.internal, sizeof(*data));
  STRATA_REQUIRE(data->magic == kUniqueIdMagic, strataInvalidArgument,
                 "the unique id is not one made by strataGetUniqueId (bad magic 0x%08x)", data->magic);
  return Status::Ok();
}

void StartBootstrapRoot(int listenFd, const uint8_t secret[kSecretBytes], int64_t timeoutMs) {
  std::vector<uint8_t> s(secret, secret + kSecretBytes);
  std::thread(RunRoot, listenFd, std::move(s), timeoutMs).detach();
}

BootstrapClient::~BootstrapClient() { CloseFd(&fd_); }

Status BootstrapClient::connect(const SockAddr& root, const uint8_t secret[kSecretBytes], Deadline deadline) {
  memcpy(secret_, secret, kSecretBytes);
  Status st = ConnectTcp(root, deadline, &fd_);
  if (!st.ok())
    return MakeError(st.code(), "cannot reach the bootstrap root at %s: %s", root.str().c_str(), st.message().c_str());
  STRATA_CHECK(LocalAddress(fd_, &localIp_));
  return Status::Ok();
}

Status BootstrapClient::exchange(int rank, int nranks, const PeerInfo& mine, std::vector<PeerInfo>* all,
                                 Deadline deadline) {
  Hello h{};
  h.magic = kHelloMagic;
  h.rank = rank;
  h.nranks = nranks;
  memcpy(h.secret, secret_, kSecretBytes);
  h.info = mine;
  STRATA_CHECK(SendAll(fd_, &h, sizeof(h), deadline));
  all->resize(nranks);
  Status st = RecvAll(fd_, all->data(), nranks * sizeof(PeerInfo), deadline);
  if (!st.ok())
    return MakeError(st.code(), "bootstrap: the peer table never arrived (did all %d ranks start, with the same "
                     "unique id and rank count?): %s", nranks, st.message().c_str());
  return Status::Ok();
}

Status BootstrapClient::barrier(strataResult_t myResult, Deadline deadline) {
  int32_t r = myResult;
  STRATA_CHECK(SendAll(fd_, &r, sizeof(r), deadline));
  BarrierReply reply{};
  Status st = RecvAll(fd_, &reply, sizeof(reply), deadline);
  CloseFd(&fd_);
  if (!st.ok()) return MakeError(st.code(), "bootstrap barrier failed: %s", st.message().c_str());
  if (reply.result != strataSuccess)
    return MakeError(strataRemoteError, "rank %d failed to set up its connections (%s)", reply.failedRank,
                     strataGetErrorString(static_cast<strataResult_t>(reply.result)));
  return Status::Ok();
}

}  // namespace strata
