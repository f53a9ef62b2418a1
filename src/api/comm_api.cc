// Communicator life cycle: unique ids, init (explicit, from the launcher's environment, by split),
// destroy, abort and queries.
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "api/comm_handle.h"
#include "core/bootstrap.h"
#include "core/config.h"
#include "core/launch_env.h"
#include "core/log.h"
#include "exec/host_reduce.h"

namespace strata {
namespace {

Status InitComm(strataComm_t* out, int nranks, const UniqueIdData& id, int rank, const strataConfig_t* config) {
  STRATA_REQUIRE(out != nullptr, strataInvalidArgument, "comm output pointer is NULL");
  *out = nullptr;
  STRATA_REQUIRE(nranks >= 1, strataInvalidArgument, "nranks must be at least 1 (got %d)", nranks);
  STRATA_REQUIRE(nranks <= kMaxRanks, strataInvalidArgument, "%d ranks is more than strata supports (%d)", nranks,
                 kMaxRanks);
  STRATA_REQUIRE(rank >= 0 && rank < nranks, strataInvalidArgument, "rank %d is out of range for %d ranks", rank,
                 nranks);
  CommSettings settings;
  STRATA_CHECK(ResolveSettings(config, &settings));
  auto impl = std::make_unique<Communicator>();
  STRATA_CHECK(impl->init(id, nranks, rank, settings));
  *out = NewCommHandle(std::move(impl));
  return Status::Ok();
}

Status MakeRoot(const SockAddr& bindAddr, int64_t timeoutMs, UniqueIdData* id) {
  int fd = -1;
  SockAddr bound;
  STRATA_CHECK(ListenTcp(bindAddr, &fd, &bound));
  id->magic = kUniqueIdMagic;
  id->version = STRATA_VERSION;
  id->ip = bound.ip;
  id->port = bound.port;
  StartBootstrapRoot(fd, id->secret, timeoutMs);
  return Status::Ok();
}

// `advertise` (network order; 0: none): the address the id names for the root, which then listens on every
// interface. A split passes the address its parent's peers already reach this rank at.
Status GetUniqueId(strataUniqueId* out, uint32_t advertise = 0) {
  STRATA_REQUIRE(out != nullptr, strataInvalidArgument, "unique id pointer is NULL");
  CommSettings settings;
  STRATA_CHECK(ResolveSettings(nullptr, &settings));
  // The root listens on the interface the user named, else on all interfaces; the id advertises an
  // address other hosts can reach.
  uint32_t ip = htonl(INADDR_LOOPBACK);
  SockAddr bindAddr;
  if (advertise != 0) {
    bindAddr.ip = htonl(INADDR_ANY);
    ip = advertise;
  } else if (!settings.socketIfname.empty()) {
    STRATA_CHECK(InterfaceAddress(settings.socketIfname, &ip));
    bindAddr.ip = ip;
  } else {
    bindAddr.ip = htonl(INADDR_ANY);
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    SockAddr resolved;
    if (ParseHostPort(std::string(host) + ":0", &resolved).ok() && (ntohl(resolved.ip) >> 24) != 127)
      ip = resolved.ip;
  }
  UniqueIdData id{};
  RandomBytes(id.secret, sizeof(id.secret));
  STRATA_CHECK(MakeRoot(bindAddr, settings.timeoutMs, &id));
  id.ip = ip;
  EncodeUniqueId(id, out);
  return Status::Ok();
}

Status InitFromEnv(strataComm_t* out, const strataConfig_t* config) {
  STRATA_REQUIRE(out != nullptr, strataInvalidArgument, "comm output pointer is NULL");
  LaunchEnv env;
  STRATA_CHECK(ReadLaunchEnv(&env));
  UniqueIdData id{};
  id.magic = kUniqueIdMagic;
  id.version = STRATA_VERSION;
  id.ip = env.root.ip;
  id.port = env.root.port;
  memcpy(id.secret, env.secret, kSecretBytes);
  if (env.rank == 0) {
    CommSettings settings;
    STRATA_CHECK(ResolveSettings(config, &settings));
    if (env.rootFd >= 0) {
      StartBootstrapRoot(env.rootFd, id.secret, settings.timeoutMs);
    } else {
      SockAddr bindAddr = env.root;
      Status st = MakeRoot(bindAddr, settings.timeoutMs, &id);
      if (!st.ok()) {
        // The address may name this host by an address it cannot bind (NAT, a name): try all.
        bindAddr.ip = htonl(INADDR_ANY);
        Status any = MakeRoot(bindAddr, settings.timeoutMs, &id);
        STRATA_REQUIRE(any.ok() || !env.rootDerived, any.code(),
                       "%s; the port was derived from the %s job id and another program holds it: set "
                       "STRATA_ROOT_ADDR=127.0.0.1:PORT with a free port",
                       st.message().c_str(), env.launcher.c_str());
        STRATA_CHECK(any);
      }
      id.ip = env.root.ip;
    }
  }
  return InitComm(out, env.nranks, id, env.rank, config);
}

Status Split(strataComm_t comm, int color, int key, strataComm_t* newcomm, const strataConfig_t* config) {
  STRATA_REQUIRE(newcomm != nullptr, strataInvalidArgument, "newcomm pointer is NULL");
  *newcomm = nullptr;
  STRATA_REQUIRE(color >= 0 || color == STRATA_SPLIT_NOCOLOR, strataInvalidArgument,
                 "color must be non-negative or STRATA_SPLIT_NOCOLOR (got %d)", color);
  CommGuard c(comm, CommGuard::kMovesData);
  STRATA_CHECK(c.status());
  const int n = c->nranks(), me = c->rank();
  // Everyone learns every rank's (color, key), then the lowest new rank of each color makes a
  // unique id and everyone picks up its color's id: two allgathers over the parent.
  struct Entry {
    int32_t color, key, rank;
  };
  Entry mine{color, key, me};
  std::vector<Entry> all(n);
  CollDesc ag;
  ag.kind = CollKind::AllGather;
  ag.count = sizeof(Entry);
  ag.dtype = strataUint8;
  STRATA_CHECK(c->runCollective(ag, &mine, all.data()));
  std::vector<Entry> group;
  for (const Entry& e : all)
    if (e.color == color && color != STRATA_SPLIT_NOCOLOR) group.push_back(e);
  std::sort(group.begin(), group.end(),
            [](const Entry& a, const Entry& b) { return a.key != b.key ? a.key < b.key : a.rank < b.rank; });
  int newRank = -1;
  for (size_t i = 0; i < group.size(); ++i)
    if (group[i].rank == me) newRank = static_cast<int>(i);
  strataUniqueId myId{};
  // The new root is reached where this rank's TCP listener is: its parent's peers on other hosts connect there
  // already (the hostname may resolve to a loopback address, which another host, or network namespace, cannot reach).
  if (newRank == 0) STRATA_CHECK(GetUniqueId(&myId, c->peers()[me].ip));
  std::vector<strataUniqueId> ids(n);
  ag.count = sizeof(strataUniqueId);
  STRATA_CHECK(c->runCollective(ag, &myId, ids.data()));
  if (newRank < 0) return Status::Ok();  // STRATA_SPLIT_NOCOLOR: no new communicator
  UniqueIdData id;
  STRATA_CHECK(DecodeUniqueId(ids[group[0].rank], &id));
  strataConfig_t inherited = STRATA_CONFIG_INITIALIZER;
  inherited.timeoutMs = static_cast<int>(std::min<int64_t>(c->settings().timeoutMs, INT32_MAX));
  const std::string algo = c->settings().forced.toString();  // forced algorithms carry over too
  if (!algo.empty()) inherited.algorithm = algo.c_str();
  return InitComm(newcomm, static_cast<int>(group.size()), id, newRank, config ? config : &inherited);
}

}  // namespace
}  // namespace strata

using strata::ReturnStatus;

extern "C" {

strataResult_t strataGetUniqueId(strataUniqueId* uniqueId) { return ReturnStatus(strata::GetUniqueId(uniqueId)); }

strataResult_t strataCommInitRankConfig(strataComm_t* comm, int nranks, strataUniqueId commId, int rank,
                                        strataConfig_t* config) {
  strata::UniqueIdData id;
  strata::Status st = strata::DecodeUniqueId(commId, &id);
  if (!st.ok()) return ReturnStatus(st);
  return ReturnStatus(strata::InitComm(comm, nranks, id, rank, config));
}

strataResult_t strataCommInitRank(strataComm_t* comm, int nranks, strataUniqueId commId, int rank) {
  return strataCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

strataResult_t strataCommInitFromEnv(strataComm_t* comm, strataConfig_t* config) {
  return ReturnStatus(strata::InitFromEnv(comm, config));
}

strataResult_t strataCommSplit(strataComm_t comm, int color, int key, strataComm_t* newcomm,
                               strataConfig_t* config) {
  return ReturnStatus(strata::Split(comm, color, key, newcomm, config));
}

strataResult_t strataCommDestroy(strataComm_t comm) { return ReturnStatus(strata::CloseComm(comm, false)); }

strataResult_t strataCommAbort(strataComm_t comm) { return ReturnStatus(strata::CloseComm(comm, true)); }

strataResult_t strataCommCount(const strataComm_t comm, int* count) {
  strata::CommGuard c(comm);
  if (!c.status().ok()) return ReturnStatus(c.status());
  if (!count) return ReturnStatus(strata::MakeError(strataInvalidArgument, "count pointer is NULL"));
  *count = c->nranks();
  return strataSuccess;
}

strataResult_t strataCommUserRank(const strataComm_t comm, int* rank) {
  strata::CommGuard c(comm);
  if (!c.status().ok()) return ReturnStatus(c.status());
  if (!rank) return ReturnStatus(strata::MakeError(strataInvalidArgument, "rank pointer is NULL"));
  *rank = c->rank();
  return strataSuccess;
}

strataResult_t strataCommGetAsyncError(strataComm_t comm, strataResult_t* asyncError) {
  strata::CommGuard c(comm);
  if (!c.status().ok()) return ReturnStatus(c.status());
  if (!asyncError) return ReturnStatus(strata::MakeError(strataInvalidArgument, "asyncError pointer is NULL"));
  // What broke the communicator: a peer death seen by the watchdog thread, or a collective that
  // failed mid-flight. The reason goes to strataGetLastError(); the call itself succeeded.
  const strata::Status st = c->asyncError();
  *asyncError = c->aborted() ? strataCommAborted : st.code();
  if (!st.ok()) (void)ReturnStatus(st);
  return strataSuccess;
}

strataResult_t strataCommGetLastAlgorithm(strataComm_t comm, const char** name) {
  strata::CommGuard c(comm);
  if (!c.status().ok()) return ReturnStatus(c.status());
  if (!name) return ReturnStatus(strata::MakeError(strataInvalidArgument, "name pointer is NULL"));
  // Names are few and kept for the life of the process, so the pointer outlives later calls.
  static std::mutex mu;
  static std::set<std::string> names;
  std::lock_guard<std::mutex> lock(mu);
  *name = names.insert(c->lastAlgorithm()).first->c_str();
  return strataSuccess;
}

}  // extern "C"
