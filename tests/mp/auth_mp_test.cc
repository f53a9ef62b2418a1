// Authenticated connections: the MAC and the handshake checks as functions, then strangers attacking
// the bootstrap root's port and a rank's TCP data listener while a real job initializes. The job must
// carry on with correct results; every stranger must be dropped (its connection closed by strata).
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/bootstrap.h"
#include "mp/mp_harness.h"
#include "transport/net/auth.h"

namespace strata {
namespace test {
namespace {

// ---- the MAC and the checks, as functions ----

TEST(SipHash, ReferenceVectors) {
  // From the SipHash paper (key 00..0f): the empty message and the 15-byte message 00..0e.
  uint8_t key[kSecretBytes], msg[15];
  for (int i = 0; i < 16; ++i) key[i] = static_cast<uint8_t>(i);
  for (int i = 0; i < 15; ++i) msg[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(SipHash24(key, msg, 0), 0x726fdb47dd0e0e31ull);
  EXPECT_EQ(SipHash24(key, msg, 15), 0xa129ca6149be45e5ull);
}

TEST(AuthHello, AcceptsTheSecretAndRejectsEverythingElse) {
  uint8_t secret[kSecretBytes], other[kSecretBytes];
  for (int i = 0; i < kSecretBytes; ++i) secret[i] = static_cast<uint8_t>(3 * i + 1), other[i] = secret[i];
  other[7] ^= 1;
  const AuthHello h = MakeAuthHello(secret, AuthPurpose::Data, 3, 8, 1, 2, 0);
  AuthHello out{};
  ASSERT_TRUE(VerifyAuthHello(&h, sizeof(h), secret, AuthPurpose::Data, &out).ok());
  EXPECT_EQ(out.fromRank, 3);
  EXPECT_EQ(out.nranks, 8);
  EXPECT_EQ(out.toRank, 1);
  EXPECT_EQ(out.channel, 2);
  EXPECT_FALSE(VerifyAuthHello(&h, sizeof(h), other, AuthPurpose::Data, &out).ok()) << "another job's secret";
  EXPECT_FALSE(VerifyAuthHello(&h, sizeof(h), secret, AuthPurpose::Bootstrap, &out).ok()) << "wrong purpose";
  EXPECT_FALSE(VerifyAuthHello(&h, sizeof(h) - 1, secret, AuthPurpose::Data, &out).ok()) << "truncated";
  for (size_t byte = 0; byte < sizeof(h); ++byte) {  // any flipped bit, fields and MAC alike
    AuthHello bad = h;
    reinterpret_cast<uint8_t*>(&bad)[byte] ^= 0x10;
    EXPECT_FALSE(VerifyAuthHello(&bad, sizeof(bad), secret, AuthPurpose::Data, &out).ok()) << "byte " << byte;
  }
  const AuthHello h2 = MakeAuthHello(secret, AuthPurpose::Data, 3, 8, 1, 2, 0);
  EXPECT_NE(memcmp(h.nonce, h2.nonce, sizeof(h.nonce)), 0) << "two hellos share a nonce";
}

// The peer table is read as C strings and numbers once it arrives: entries out of rank order and strings
// without a NUL inside their arrays are refused, naming the rank and the field.
TEST(PeerTable, RefusesWrongRanksAndUnterminatedStrings) {
  std::vector<PeerInfo> all(3);
  memset(all.data(), 0, all.size() * sizeof(PeerInfo));
  for (int r = 0; r < 3; ++r) {
    all[r].rank = r;
    snprintf(all[r].hostId, sizeof(all[r].hostId), "host%d", r);
  }
  EXPECT_TRUE(CheckPeerTable(all.data(), 3).ok());

  std::vector<PeerInfo> bad = all;
  bad[1].rank = 2;
  Status st = CheckPeerTable(bad.data(), 3);
  EXPECT_EQ(st.code(), strataRemoteError);
  EXPECT_NE(st.message().find("entry 1 of the peer table is rank 2"), std::string::npos) << st.message();

  bad = all;
  memset(bad[2].hostId, 'x', sizeof(bad[2].hostId));
  st = CheckPeerTable(bad.data(), 3);
  EXPECT_EQ(st.code(), strataRemoteError);
  EXPECT_NE(st.message().find("rank 2's host id is not terminated within its 128 bytes"), std::string::npos)
      << st.message();

  bad = all;
  memset(bad[0].machineId, 'm', sizeof(bad[0].machineId));
  EXPECT_NE(CheckPeerTable(bad.data(), 3).message().find("rank 0's machine id"), std::string::npos);
  bad = all;
  memset(bad[1].shmName, '/', sizeof(bad[1].shmName));
  EXPECT_NE(CheckPeerTable(bad.data(), 3).message().find("rank 1's segment name"), std::string::npos);
  // A NUL in the last byte is enough.
  bad = all;
  memset(bad[1].shmName, 'a', sizeof(bad[1].shmName) - 1);
  EXPECT_TRUE(CheckPeerTable(bad.data(), 3).ok());
}

TEST(RootReply, NamesTheMissingRanksAndRejectsAForeignRoot) {
  uint8_t secret[kSecretBytes] = {1, 2, 3};
  uint8_t other[kSecretBytes] = {9, 9, 9};
  const AuthHello hello = MakeAuthHello(secret, AuthPurpose::Bootstrap, 0, 6, -1, 0, 0);
  RootReply r{};
  r.magic = kRootReplyMagic;
  r.result = strataTimeout;
  r.reason = static_cast<int32_t>(RootRefusal::Timeout);
  r.nranks = 6;
  r.joined = 4;
  r.missingCount = 2;
  r.missing[0] = 2;
  r.missing[1] = 5;
  r.proof = AuthReplyMac(secret, hello);
  const Status st = CheckRootReply(&r, sizeof(r), secret, hello, 0, 6);
  EXPECT_EQ(st.code(), strataTimeout);
  EXPECT_NE(st.message().find("4 of 6 ranks joined; rank(s) 2, 5 never connected"), std::string::npos)
      << st.message();
  r.proof = AuthReplyMac(other, hello);
  EXPECT_EQ(CheckRootReply(&r, sizeof(r), secret, hello, 0, 6).code(), strataRemoteError);
  r.proof = AuthReplyMac(secret, hello);
  r.result = strataSuccess;
  EXPECT_TRUE(CheckRootReply(&r, sizeof(r), secret, hello, 0, 6).ok());
  EXPECT_FALSE(CheckRootReply(&r, sizeof(r), secret, hello, 0, 5).ok()) << "rank count differs";
}

// ---- strangers on the wire ----

int ConnectTo(uint32_t ip, uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = ip;
  a.sin_port = htons(port);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

// True when the peer closes the connection within `ms` (whatever it sends first is discarded).
bool ClosedByPeerWithin(int fd, int ms) {
  const timespec start = [] {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
  }();
  for (;;) {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const int left = ms - static_cast<int>((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000);
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) continue;
    char buf[256];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return true;
  }
}

// A set of attacks on one port: what each sent, and the connections to watch.
struct Attack {
  std::vector<std::pair<std::string, int>> dropped;  // (what, fd): strata must close these
  std::vector<int> silent;                           // held open, say nothing
  int closedAtOnce = 0;
};

Attack LaunchAttack(uint32_t ip, uint16_t port, AuthPurpose purpose) {
  Attack a;
  for (int i = 0; i < 20; ++i) {  // a port scanner
    const int fd = ConnectTo(ip, port);
    if (fd >= 0) close(fd), ++a.closedAtOnce;
  }
  std::vector<uint8_t> garbage(200);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 37 + 11);
  for (int i = 0; i < 3; ++i) {
    const int fd = ConnectTo(ip, port);
    if (fd >= 0 && send(fd, garbage.data(), garbage.size() - i * 60, MSG_NOSIGNAL) > 0)
      a.dropped.push_back({"garbage", fd});
  }
  uint8_t foreign[kSecretBytes];
  for (int i = 0; i < kSecretBytes; ++i) foreign[i] = static_cast<uint8_t>(0xA5 ^ i);
  for (int i = 0; i < 2; ++i) {  // a rank of another job: the right protocol, another secret
    const int fd = ConnectTo(ip, port);
    const AuthHello h = MakeAuthHello(foreign, purpose, 1 + i, 4, 0, 0, i);
    if (fd >= 0 && send(fd, &h, sizeof(h), MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof(h)))
      a.dropped.push_back({"another job's hello", fd});
  }
  for (int i = 0; i < 2; ++i) {  // says nothing, or half a hello, and holds on
    const int fd = ConnectTo(ip, port);
    if (fd < 0) continue;
    if (i == 1) (void)send(fd, garbage.data(), 20, MSG_NOSIGNAL);
    a.silent.push_back(fd);
  }
  return a;
}

// "" when every connection that sent something wrong was closed by strata within `ms`.
std::string CheckDropped(Attack& a, int ms) {
  std::string err;
  if (a.closedAtOnce != 20) err += "only " + std::to_string(a.closedAtOnce) + " of 20 scanner connects succeeded; ";
  if (a.dropped.size() != 5) err += "only " + std::to_string(a.dropped.size()) + " of 5 bad senders connected; ";
  for (auto& d : a.dropped) {
    if (!ClosedByPeerWithin(d.second, ms)) err += "a connection that sent " + d.first + " was not dropped; ";
    close(d.second);
  }
  // Silent ones get a short window, then are dropped too.
  for (int fd : a.silent) {
    if (!ClosedByPeerWithin(fd, ms)) err += "a silent connection was never dropped; ";
    close(fd);
  }
  return err;
}

std::string CheckAllReduce(int rank, int n, strataComm_t comm) {
  std::vector<int64_t> in(100000), out(100000, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int64_t>(i) * (rank + 1);
  if (strataAllReduce(in.data(), out.data(), in.size(), strataInt64, strataSum, comm, nullptr) != strataSuccess)
    return std::string("allreduce failed: ") + strataGetLastError(comm);
  const int64_t factor = n * (n + 1) / 2;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] != static_cast<int64_t>(i) * factor)
      return "allreduce gave " + std::to_string(out[i]) + " at " + std::to_string(i);
  return "";
}

TEST(Strangers, AtTheBootstrapRootDuringInit) {
  Attack attack;
  std::thread watcher;
  std::string attackErr, foreignErr;
  MpOptions o;
  o.nranks = 4;
  o.commTimeoutMs = 20000;
  o.timeoutSec = 60;
  o.onUniqueId = [&](const strataUniqueId& id) {
    UniqueIdData data{};
    if (!DecodeUniqueId(id, &data).ok()) {
      attackErr = "cannot decode the unique id";
      return;
    }
    attack = LaunchAttack(data.ip, data.port, AuthPurpose::Bootstrap);
    watcher = std::thread([&attack, &attackErr, &foreignErr, id] {
      // A real rank of another job whose unique id names this root's port: refused, cleanly.
      strataUniqueId foreignId = id;
      UniqueIdData d{};
      (void)DecodeUniqueId(id, &d);
      for (int i = 0; i < kSecretBytes; ++i) d.secret[i] ^= 0x5a;
      EncodeUniqueId(d, &foreignId);
      strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
      cfg.timeoutMs = 5000;
      strataComm_t c = nullptr;
      const strataResult_t rc = strataCommInitRankConfig(&c, 4, foreignId, 3, &cfg);
      if (rc == strataSuccess) foreignErr = "a rank with another job's secret joined the job";
      attackErr = CheckDropped(attack, 2 * AuthAcceptor::kHelloWindowMs + 2000);
    });
  };
  const MpResult r = RunRanks(o, CheckAllReduce);
  if (watcher.joinable()) watcher.join();
  EXPECT_TRUE(r.ok()) << r.summary();
  EXPECT_EQ(attackErr, "");
  EXPECT_EQ(foreignErr, "");
}

// The listening TCP sockets of this process, as (ip, port), from /proc.
std::set<std::pair<uint32_t, uint16_t>> OwnListeners() {
  std::set<std::string> inodes;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      char link[128] = {0};
      const std::string path = std::string("/proc/self/fd/") + e->d_name;
      if (readlink(path.c_str(), link, sizeof(link) - 1) > 0 && strncmp(link, "socket:[", 8) == 0)
        inodes.insert(std::string(link + 8, strlen(link) - 9));
    }
    closedir(d);
  }
  std::set<std::pair<uint32_t, uint16_t>> out;
  FILE* f = fopen("/proc/self/net/tcp", "r");
  if (!f) return out;
  char line[512];
  while (fgets(line, sizeof(line), f)) {
    unsigned ip = 0, port = 0, state = 0;
    char inode[32] = {0};
    if (sscanf(line, " %*d: %x:%x %*x:%*x %x %*s %*s %*s %*d %*d %31s", &ip, &port, &state, inode) == 4 &&
        state == 0x0A && inodes.count(inode))
      out.insert({ip, static_cast<uint16_t>(port)});
  }
  fclose(f);
  return out;
}

TEST(Strangers, AtATcpDataListenerDuringInit) {
  MpOptions o;
  o.nranks = 4;
  o.tcp = true;  // rank 0 accepts every data connection on its listener
  o.commTimeoutMs = 20000;
  o.timeoutSec = 60;
  static std::thread attacker;
  static std::string attackErr;
  o.beforeInit = [](int rank) {
    if (rank == 3) std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // holds the others at the root
    if (rank != 0) return;
    const auto before = OwnListeners();
    attacker = std::thread([before] {
      for (int i = 0; i < 2000; ++i) {  // the listener appears as init starts
        for (const auto& l : OwnListeners()) {
          if (before.count(l)) continue;
          Attack a = LaunchAttack(l.first, l.second, AuthPurpose::Data);
          attackErr = CheckDropped(a, 2 * AuthAcceptor::kHelloWindowMs + 4000);
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      attackErr = "the data listener never showed up in /proc/self/net/tcp";
    });
  };
  const MpResult r = RunRanks(o, [](int rank, int n, strataComm_t comm) -> std::string {
    std::string err = CheckAllReduce(rank, n, comm);
    if (rank == 0) {
      attacker.join();
      if (!attackErr.empty()) err += "attack on the data listener: " + attackErr;
    }
    return err;
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

}  // namespace
}  // namespace test
}  // namespace strata
