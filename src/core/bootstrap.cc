#include "core/bootstrap.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "core/log.h"

namespace strata {

namespace {
struct BarrierReply {
  int32_t result;  // strataSuccess when every rank succeeded
  int32_t failedRank;
};

struct Joiner {
  int fd = -1;
  AuthHello hello{};
};

RootReply MakeReply(const uint8_t* secret, const AuthHello& hello, strataResult_t result, RootRefusal reason,
                    int nranks, int joined) {
  RootReply r{};
  r.magic = kRootReplyMagic;
  r.result = result;
  r.reason = static_cast<int32_t>(reason);
  r.nranks = nranks;
  r.joined = joined;
  r.proof = AuthReplyMac(secret, hello);
  return r;
}

void RunRoot(int listenFd, std::vector<uint8_t> secret, int64_t timeoutMs) {
  // Give up a little before the ranks do, so that they hear from the root which ranks are missing: the
  // root's own timeout, shortened to the smallest one a joined rank brought (ranks may set theirs per
  // communicator, after the root started).
  auto giveUpAfter = [](int64_t ms) { return ms - std::min<int64_t>(1000, ms / 10); };
  Deadline deadline = Deadline::After(giveUpAfter(timeoutMs));
  int64_t shortest = timeoutMs;
  AuthAcceptor acceptor(listenFd, secret.data(), AuthPurpose::Bootstrap, "bootstrap root");
  int nranks = -1, joined = 0;
  std::vector<Joiner> ranks;
  std::vector<PeerInfo> table;
  auto closeAll = [&] {
    for (Joiner& j : ranks) CloseFd(&j.fd);
    close(listenFd);
  };
  while (nranks < 0 || joined < nranks) {
    Joiner j;
    Status st = acceptor.next(deadline, &j.fd, &j.hello);
    if (!st.ok()) {
      std::string missing;
      for (int r = 0; r < nranks; ++r)
        if (ranks[r].fd < 0) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      STRATA_LOG(WARN, BOOT, "bootstrap root gives up: %d of %d ranks joined (missing: %s; %s)", joined, nranks,
                 missing.c_str(), st.message().c_str());
      for (int r = 0; r < nranks; ++r) {
        if (ranks[r].fd < 0) continue;
        RootReply reply = MakeReply(secret.data(), ranks[r].hello, strataTimeout, RootRefusal::Timeout, nranks, joined);
        for (int q = 0; q < nranks; ++q) {
          if (ranks[q].fd >= 0) continue;
          if (reply.missingCount < 16) reply.missing[reply.missingCount] = q;
          ++reply.missingCount;
        }
        (void)SendAll(ranks[r].fd, &reply, sizeof(reply), Deadline::After(1000));
      }
      closeAll();
      return;
    }
    const AuthHello& h = j.hello;
    // Authenticated, so one of this job's ranks: a refusal gets an answer that explains it.
    RootRefusal refusal = RootRefusal::None;
    if (h.nranks < 1 || h.nranks > kMaxRanks || (nranks >= 0 && h.nranks != nranks)) {
      refusal = RootRefusal::RankCountDiffers;
    } else if (h.fromRank < 0 || h.fromRank >= h.nranks || (nranks >= 0 && ranks[h.fromRank].fd >= 0)) {
      refusal = RootRefusal::DuplicateRank;
    }
    PeerInfo info{};
    if (refusal == RootRefusal::None) {
      st = RecvAll(j.fd, &info, sizeof(info), Deadline::After(std::min(deadline.remainingMs(5000), 5000)));
      if (!st.ok() || info.rank != h.fromRank) {
        STRATA_LOG(WARN, BOOT, "bootstrap root dropped rank %d: no valid peer info (%s)", h.fromRank,
                   st.ok() ? "rank differs from the handshake" : st.message().c_str());
        CloseFd(&j.fd);
        continue;
      }
    } else {
      STRATA_LOG(WARN, BOOT, "bootstrap root refused rank %d of %d (the root has %d ranks, %s)", h.fromRank, h.nranks,
                 nranks, refusal == RootRefusal::DuplicateRank ? "rank already joined" : "rank count differs");
      RootReply reply =
          MakeReply(secret.data(), h, strataInvalidUsage, refusal, nranks < 0 ? h.nranks : nranks, joined);
      (void)SendAll(j.fd, &reply, sizeof(reply), Deadline::After(1000));
      CloseFd(&j.fd);
      continue;
    }
    if (nranks < 0) {
      nranks = h.nranks;
      ranks.resize(nranks);
      table.resize(nranks);
    }
    if (info.timeoutMs > 0 && info.timeoutMs < shortest) {
      shortest = info.timeoutMs;
      deadline = Deadline::After(giveUpAfter(shortest));
    }
    table[h.fromRank] = info;
    ranks[h.fromRank] = j;
    ++joined;
  }
  if (acceptor.dropped() > 0)
    STRATA_LOG(WARN, BOOT, "bootstrap root dropped %d connection(s) that did not authenticate", acceptor.dropped());
  for (int r = 0; r < nranks; ++r) {
    const RootReply reply = MakeReply(secret.data(), ranks[r].hello, strataSuccess, RootRefusal::None, nranks, joined);
    if (!SendAll(ranks[r].fd, &reply, sizeof(reply), deadline).ok() ||
        !SendAll(ranks[r].fd, table.data(), table.size() * sizeof(PeerInfo), deadline).ok())
      STRATA_LOG(WARN, BOOT, "bootstrap root could not send the table to rank %d", r);
  }
  // The barrier: each rank reports its setup result; a rank that died closed its socket.
  const Deadline barrierDeadline = Deadline::After(timeoutMs);
  BarrierReply reply{strataSuccess, -1};
  for (int r = 0; r < nranks; ++r) {
    int32_t result = strataInternalError;
    if (!RecvAll(ranks[r].fd, &result, sizeof(result), barrierDeadline).ok()) result = strataRemoteError;
    if (result != strataSuccess && reply.result == strataSuccess) reply = BarrierReply{result, r};
  }
  for (int r = 0; r < nranks; ++r) (void)SendAll(ranks[r].fd, &reply, sizeof(reply), barrierDeadline);
  closeAll();
}
}  // namespace

Status CheckRootReply(const void* bytes, size_t len, const uint8_t secret[kSecretBytes], const AuthHello& hello,
                      int rank, int nranks) {
  STRATA_REQUIRE(len == sizeof(RootReply), strataRemoteError, "bootstrap root reply of %zu bytes, expected %zu", len,
                 sizeof(RootReply));
  RootReply r;
  memcpy(&r, bytes, sizeof(r));
  STRATA_REQUIRE(r.magic == kRootReplyMagic && r.proof == AuthReplyMac(secret, hello), strataRemoteError,
                 "the bootstrap root's reply does not prove this job's secret: another job's root on that port?");
  if (r.result == strataSuccess) {
    STRATA_REQUIRE(r.nranks == nranks, strataRemoteError, "the bootstrap root has %d ranks, this rank expected %d",
                   r.nranks, nranks);
    return Status::Ok();
  }
  switch (static_cast<RootRefusal>(r.reason)) {
    case RootRefusal::Timeout: {
      std::string missing;
      const int listed = std::max(0, std::min(r.missingCount, 16));
      for (int i = 0; i < listed; ++i) missing += (i ? ", " : "") + std::to_string(r.missing[i]);
      if (r.missingCount > listed) missing += " and " + std::to_string(r.missingCount - listed) + " more";
      return MakeError(strataTimeout,
                       "bootstrap timed out: %d of %d ranks joined; rank(s) %s never connected to the root (did they "
                       "start, with the same unique id?)",
                       r.joined, r.nranks, missing.c_str());
    }
    case RootRefusal::DuplicateRank:
      return MakeError(strataInvalidUsage, "the bootstrap root refused rank %d: another process already joined as rank %d",
                       rank, rank);
    case RootRefusal::RankCountDiffers:
      return MakeError(strataInvalidUsage, "the bootstrap root refused this rank: it said %d ranks, the root has %d",
                       nranks, r.nranks);
    default:
      return MakeError(strataRemoteError, "the bootstrap root refused this rank (result %d, reason %d)", r.result,
                       r.reason);
  }
}

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
  STRATA_REQUIRE(nranks <= kMaxRanks, strataInvalidArgument, "%d ranks is more than strata supports (%d)", nranks,
                 kMaxRanks);
  rank_ = rank;
  const AuthHello hello = MakeAuthHello(secret_, AuthPurpose::Bootstrap, rank, nranks, -1, 0, 0);
  STRATA_CHECK(SendAll(fd_, &hello, sizeof(hello), deadline));
  STRATA_CHECK(SendAll(fd_, &mine, sizeof(mine), deadline));
  RootReply reply{};
  Status st = RecvAll(fd_, &reply, sizeof(reply), deadline);
  if (!st.ok())
    return MakeError(st.code(), "bootstrap: the root never answered (did all %d ranks start, with the same unique id "
                     "and rank count?): %s", nranks, st.message().c_str());
  STRATA_CHECK(CheckRootReply(&reply, sizeof(reply), secret_, hello, rank, nranks));
  all->resize(nranks);
  st = RecvAll(fd_, all->data(), nranks * sizeof(PeerInfo), deadline);
  if (!st.ok()) return MakeError(st.code(), "bootstrap: the peer table did not arrive: %s", st.message().c_str());
  return CheckPeerTable(all->data(), nranks);
}

Status CheckPeerTable(const PeerInfo* all, int nranks) {
  for (int r = 0; r < nranks; ++r) {
    const PeerInfo& p = all[r];
    STRATA_REQUIRE(p.rank == r, strataRemoteError, "bootstrap: entry %d of the peer table is rank %d", r, p.rank);
    const struct {
      const char* name;
      const char* field;
      size_t size;
    } strings[] = {{"host id", p.hostId, sizeof(p.hostId)},
                   {"machine id", p.machineId, sizeof(p.machineId)},
                   {"segment name", p.shmName, sizeof(p.shmName)},
                   {"quantization spec", p.quant, sizeof(p.quant)}};
    for (const auto& s : strings)
      STRATA_REQUIRE(memchr(s.field, '\0', s.size) != nullptr, strataRemoteError,
                     "bootstrap: rank %d's %s is not terminated within its %zu bytes", r, s.name, s.size);
  }
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
