// The communicator: rank, peers, transports and the connections between them, the wait policy, and
// the cache of plans. The API layer turns calls into CollDesc and asks it to run them.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/plan.h"
#include "core/bootstrap.h"
#include "core/status.h"
#include "exec/executor.h"
#include "exec/plan_run.h"
#include "transport/connection.h"
#include "transport/net/tcp/tcp_transport.h"
#include "transport/shm/shm_transport.h"

namespace strata {

// Settings resolved from strataConfig_t and the environment.
struct CommSettings {
  int64_t timeoutMs = 300000;
  int nchannels = 1;
  bool shmDisable = false;
  int nsocks = 4;
  size_t slotBytes = 128 << 10;
  int nslots = 8;
  size_t directMaxBytes = 16 << 10;
  int spinUs = 10;
  int yieldUs = 2000;
  std::string name;
  std::string socketIfname;
};
Status ResolveSettings(const strataConfig_t* config, CommSettings* out);

// A point-to-point operation of a group.
struct P2POp {
  bool isSend;
  int peer;
  void* buf;
  size_t count;
  strataDataType_t dtype;
};

class Communicator : public ConnectionTable {
 public:
  ~Communicator() override;

  Status init(const UniqueIdData& id, int nranks, int rank, const CommSettings& settings);

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const CommSettings& settings() const { return settings_; }
  const std::vector<PeerInfo>& peers() const { return peers_; }

  // Runs a collective on host buffers; blocks until done.
  Status runCollective(const CollDesc& desc, const void* send, void* recv);
  // Runs a group's send/recv operations together.
  Status runP2P(const std::vector<P2POp>& ops);

  void abort() { aborted_.store(true); }
  bool aborted() const { return aborted_.load(); }

  SendConnection* sendTo(int channel, int peer) override;
  RecvConnection* recvFrom(int channel, int peer) override;

 private:
  Status setupConnections(const std::vector<PeerInfo>& all, uint32_t listenIp, BootstrapClient& boot,
                          Deadline deadline);
  // A plan with its connections resolved, reused by every call with the same shape.
  struct CachedPlan {
    Plan plan;
    std::unique_ptr<PlanRun> run;
  };
  Status cachedPlan(const CollDesc& desc, CachedPlan** out);
  Status reportFailure(const Status& st, const char* what);
  WaitPolicy waitPolicy() const;

  int rank_ = 0, nranks_ = 1;
  CommSettings settings_;
  PlanGeometry geo_;
  std::vector<PeerInfo> peers_;
  std::unique_ptr<ShmTransport> shm_;
  std::unique_ptr<TcpTransport> tcp_;
  bool hasShmPeers_ = false;
  bool oversubscribed_ = false;  // more ranks on this host than CPUs we may run on
  // [channel][peer]
  std::vector<std::vector<std::unique_ptr<SendConnection>>> send_;
  std::vector<std::vector<std::unique_ptr<RecvConnection>>> recv_;
  std::atomic<bool> aborted_{false};
  std::vector<char> scratch_;
  std::map<std::tuple<int, uint64_t, int, int, int>, CachedPlan> plans_;
};

// Host identity: STRATA_HOSTID, else MachineId().
std::string HostId();
// Hostname plus the kernel's boot id.
std::string MachineId();

}  // namespace strata
