#include "core/communicator.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>

#include "algorithms/algorithms.h"
#include "core/call_check.h"
#include "core/config.h"
#include "core/log.h"
#include "core/plan_cache.h"
#include "exec/host_reduce.h"
#include "topology/local_topology.h"
#include "transport/shm/huge_pages.h"
#include "transport/shm/shared_buffers.h"

namespace strata {

namespace {

std::atomic<uint64_t> g_commCounter{0};

bool IsPowerOfTwo(uint64_t x) { return x && !(x & (x - 1)); }

// This rank's place for its PeerInfo: its host's topology (detected once per process, or
// STRATA_TOPO_FILE), after STRATA_BIND has bound it, so that peers learn the binding it keeps.
Status DescribeRank(const std::string& hostId, uint32_t ip, RankPlaceWire* wire) {
  LocalTopology topo;
  STRATA_CHECK(GetLocalTopology(hostId, &topo));
  bool bound = false;
  if (ConfigBool("STRATA_BIND")) {
    std::string what;
    Status st = BindToNumaNode(topo.myHost(), LauncherLocalRank(), &bound, &what);
    if (!st.ok()) STRATA_LOG(WARN, INIT, "STRATA_BIND: could not bind this process: %s", st.message().c_str());
    if (!what.empty()) STRATA_LOG(INFO, INIT, "%s", what.c_str());
  }
  RankPlace place = DescribeThisProcess(topo, InterfaceOfAddress(ip));
  place.boundByStrata = bound;
  EncodeRankPlace(place, topo.graph->links, wire);
  return Status::Ok();
}

// The communicator's topology from every rank's PeerInfo; links are rank 0's, as the geometry is.
CommTopology TopologyFromPeers(const std::vector<PeerInfo>& all) {
  std::vector<RankPlace> places(all.size());
  LinkTable links, ignored;
  for (size_t r = 0; r < all.size(); ++r)
    DecodeRankPlace(all[r].topo, std::string(all[r].hostId, strnlen(all[r].hostId, sizeof(all[r].hostId))),
                    &places[r], r == 0 ? &links : &ignored);
  return CommTopology(std::move(places), links);
}
}  // namespace

std::string HostId() {
  std::string id = ConfigString("STRATA_HOSTID");
  return id.empty() ? MachineId() : id;
}

std::string MachineId() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string boot;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::getline(f, boot);
  return std::string(host) + ":" + boot;
}

Status ResolveSettings(const strataConfig_t* config, CommSettings* s) {
  s->timeoutMs = ConfigInt("STRATA_TIMEOUT") * 1000;
  s->nchannels = static_cast<int>(ConfigInt("STRATA_NCHANNELS"));
  s->shmDisable = ConfigBool("STRATA_SHM_DISABLE");
  s->nsocks = static_cast<int>(ConfigInt("STRATA_NSOCKS_PERPEER"));
  s->slotBytes = ConfigBytes("STRATA_SLOT_BYTES");
  s->nslots = static_cast<int>(ConfigInt("STRATA_NSLOTS"));
  s->directMaxBytes = ConfigBytes("STRATA_DIRECT_MAX_BYTES");
  s->windowBytes = ConfigBytes("STRATA_WINDOW_BYTES");
  s->cma = ConfigBool("STRATA_CMA");
  const int64_t hugeAfter = ConfigInt("STRATA_HUGE_PAGES");
  STRATA_REQUIRE(hugeAfter >= 0 && hugeAfter <= 1000000, strataInvalidArgument,
                 "STRATA_HUGE_PAGES must be a count of calls from 0 (never) to 1000000 (got %lld)",
                 static_cast<long long>(hugeAfter));
  s->hugePagesAfter = static_cast<int>(hugeAfter);
  s->spinUs = static_cast<int>(ConfigInt("STRATA_SPIN_US"));
  s->yieldUs = static_cast<int>(ConfigInt("STRATA_YIELD_US"));
  s->socketIfname = ConfigString("STRATA_SOCKET_IFNAME");
  s->checkCalls = ConfigBool("STRATA_CHECK_CALLS");
  s->calibrate = ConfigBool("STRATA_CALIBRATE");
  s->tune = ConfigBool("STRATA_TUNE");
  const std::string stores = ConfigString("STRATA_SLOT_STORES");
  STRATA_REQUIRE(ParseSlotStores(stores.c_str(), &s->slotStores), strataInvalidArgument,
                 "STRATA_SLOT_STORES must be auto, cached or streaming (got \"%s\")", stores.c_str());
  std::string algoSpec = ConfigString("STRATA_ALGO");
  s->quant = QuantSpecFromEnvironment();
  s->quantSource = QuantSource::kEnv;
  s->quantMinBytes = QuantMinBytesFromEnvironment();
  if (config) {
    STRATA_REQUIRE(config->magic == STRATA_CONFIG_MAGIC && config->size >= offsetof(strataConfig_t, timeoutMs),
                   strataInvalidArgument,
                   "config was not initialized with STRATA_CONFIG_INITIALIZER (magic 0x%x, size %zu)", config->magic,
                   config->size);
    auto has = [config](size_t offset) { return config->size > offset; };
    if (config->commName) s->name = config->commName;
    if (has(offsetof(strataConfig_t, timeoutMs)) && config->timeoutMs != STRATA_CONFIG_UNDEF_INT)
      s->timeoutMs = config->timeoutMs;
    if (has(offsetof(strataConfig_t, nChannels)) && config->nChannels != STRATA_CONFIG_UNDEF_INT)
      s->nchannels = config->nChannels;
    if (has(offsetof(strataConfig_t, shmDisable)) && config->shmDisable != STRATA_CONFIG_UNDEF_INT)
      s->shmDisable = config->shmDisable != 0;
    if (has(offsetof(strataConfig_t, nSocketsPerPeer)) && config->nSocketsPerPeer != STRATA_CONFIG_UNDEF_INT)
      s->nsocks = config->nSocketsPerPeer;
    if (has(offsetof(strataConfig_t, algorithm)) && config->algorithm) algoSpec = config->algorithm;
    if (has(offsetof(strataConfig_t, quant)) && config->quant) {
      Status st = ParseQuantSpec(config->quant, &s->quant);
      if (!st.ok()) return MakeError(st.code(), "config quant \"%s\": %s", config->quant, st.message().c_str());
      s->quantSource = QuantSource::kComm;
    }
  }
  STRATA_CHECK(ParseAlgoSpec(algoSpec, &s->forced));
  STRATA_REQUIRE(s->timeoutMs > 0, strataInvalidArgument, "timeout must be positive (got %lld ms)",
                 static_cast<long long>(s->timeoutMs));
  STRATA_REQUIRE(s->nchannels >= 1 && s->nchannels <= 16, strataInvalidArgument,
                 "channel count must be 1-16 (got %d)", s->nchannels);
  STRATA_REQUIRE(s->nsocks >= 1 && s->nsocks <= 16, strataInvalidArgument,
                 "sockets per peer must be 1-16 (got %d)", s->nsocks);
  STRATA_REQUIRE(IsPowerOfTwo(s->slotBytes) && s->slotBytes >= 4096 && s->slotBytes <= (4u << 20),
                 strataInvalidArgument, "STRATA_SLOT_BYTES must be a power of two in 4K-4M (got %zu)", s->slotBytes);
  STRATA_REQUIRE(s->nslots >= 2 && s->nslots <= kMaxSlots, strataInvalidArgument, "STRATA_NSLOTS must be 2-%d (got %d)",
                 kMaxSlots, s->nslots);
  STRATA_REQUIRE(s->windowBytes <= (uint64_t{1} << 30) && s->windowBytes % 64 == 0, strataInvalidArgument,
                 "STRATA_WINDOW_BYTES must be a multiple of 64 up to 1G (got %zu)", s->windowBytes);
  // The direct algorithm's sends must fit in a FIFO (see direct_plans.cc).
  s->directMaxBytes = std::min(s->directMaxBytes, s->slotBytes * s->nslots);
  return Status::Ok();
}

Communicator::~Communicator() {
  if (shm_) shm_->markDeparted();  // before this process may exit: the peers' watchdogs see a departure, not a death
  stopWatchdog();
  send_.clear();
  recv_.clear();
}

void Communicator::startWatchdog() {
  if (!monitor_.watchesAny()) return;
  watchdog_ = std::thread([this] {
    LogSetRank(rank_, nranks_);
    std::unique_lock<std::mutex> lock(watchMu_);
    while (!stopWatch_) {
      watchCv_.wait_for(lock, std::chrono::milliseconds(200));
      if (stopWatch_) break;
      std::vector<int> dead = monitor_.deadRanks();
      // A peer that destroyed its communicator before it exited left this rank nothing to wait for: its own calls on
      // the communicator with that peer fail, saying so (PeerMonitor::describe), and no call means no error.
      dead.erase(std::remove_if(dead.begin(), dead.end(), [this](int r) { return monitor_.departed(r); }), dead.end());
      if (dead.empty()) continue;
      Status st = MakeError(strataRemoteError, "%s (found by the watchdog)", monitor_.describe(dead).c_str());
      STRATA_LOG(WARN, INIT, "%s", st.message().c_str());
      setAsyncError(st);
      break;  // the first error is the one reported; nothing more to watch for
    }
  });
}

void Communicator::stopWatchdog() {
  if (!watchdog_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(watchMu_);
    stopWatch_ = true;
  }
  watchCv_.notify_all();
  watchdog_.join();
}

void Communicator::setAsyncError(const Status& st) {
  std::lock_guard<std::mutex> lock(asyncMu_);
  if (broken_.load()) return;
  asyncError_ = st;
  broken_.store(true);
}

Status Communicator::asyncError() const {
  if (!broken_.load()) return Status::Ok();
  std::lock_guard<std::mutex> lock(asyncMu_);
  return asyncError_;
}

Status Communicator::failIfBroken(const char* what) const {
  if (!broken_.load()) return Status::Ok();
  const Status st = asyncError();
  return MakeError(st.code(), "%s refused: the communicator failed earlier (%s); destroy or abort it",
                   what, st.message().c_str());
}

Status Communicator::init(const UniqueIdData& id, int nranks, int rank, const CommSettings& settings) {
  rank_ = rank;
  nranks_ = nranks;
  settings_ = settings;
  if (settings.slotStores == SlotStores::kAuto) {
    slotStores_ = &SlotStoreTuner::Shared();
  } else {
    ownStores_ = std::make_unique<SlotStoreTuner>(settings.slotStores);
    slotStores_ = ownStores_.get();
  }
  memcpy(secret_, id.secret, kSecretBytes);
  LogSetRank(rank, nranks);
  const Deadline deadline = Deadline::After(settings.timeoutMs);

  SockAddr root;
  root.ip = id.ip;
  root.port = id.port;
  BootstrapClient boot;
  STRATA_CHECK(boot.connect(root, id.secret, deadline));

  uint32_t listenIp = boot.localIp();
  if (!settings.socketIfname.empty()) STRATA_CHECK(InterfaceAddress(settings.socketIfname, &listenIp));
  tcp_ = std::make_unique<TcpTransport>();
  STRATA_CHECK(tcp_->listen(listenIp));

  PeerInfo me{};
  snprintf(me.hostId, sizeof(me.hostId), "%s", HostId().c_str());
  snprintf(me.machineId, sizeof(me.machineId), "%s", MachineId().c_str());
  me.rank = rank;
  me.pid = getpid();
  me.pidNamespace = PidNamespaceId();
  me.checkCalls = settings.checkCalls;
  me.selection = (settings.calibrate ? kSelectionCalibrate : 0) | (settings.tune ? kSelectionTune : 0);
  me.ip = tcp_->listenAddr().ip;
  me.port = tcp_->listenAddr().port;
  me.slotBytes = static_cast<uint32_t>(settings.slotBytes);
  me.nslots = settings.nslots;
  me.nchannels = settings.nchannels;
  me.nsocks = settings.nsocks;
  me.directMaxBytes = static_cast<uint32_t>(settings.directMaxBytes);
  me.windowBytes = static_cast<uint32_t>(settings.windowBytes);
  me.shmDisable = settings.shmDisable;
  me.timeoutMs = static_cast<int32_t>(std::min<int64_t>(settings.timeoutMs, INT32_MAX));
  me.asymmetricBell = Doorbell::RegisterAsymmetric() ? 1 : 0;
  snprintf(me.quant, sizeof(me.quant), "%s %s", settings.quantSource == QuantSource::kComm ? "config" : "env",
           settings.quant.enabled ? QuantSpecString(settings.quant).c_str() : "none");
  me.quantMinBytes = settings.quantMinBytes;
  STRATA_CHECK(DescribeRank(me.hostId, me.ip, &me.topo));

  // The segment exists before the table goes out, so peers can map it right after: one FIFO per
  // (sending rank, channel). Unused FIFOs are never touched, so they cost address space only.
  if (!settings.shmDisable && nranks > 1) {
    shm_ = std::make_unique<ShmTransport>();
    ShmLayout layout{nranks, settings.nchannels, settings.nslots, settings.slotBytes, settings.windowBytes};
    uint64_t tag = 0;
    RandomBytes(&tag, sizeof(tag));
    const std::string name = ShmSegmentName(getpid(), g_commCounter++, tag);
    STRATA_REQUIRE(name.size() < sizeof(me.shmName), strataInternalError, "segment name %s is too long", name.c_str());
    memcpy(me.shmName, name.c_str(), name.size() + 1);
    STRATA_CHECK(shm_->createOwn(me.shmName, layout, rank, rank));
  }

  std::vector<PeerInfo> all;
  STRATA_CHECK(boot.exchange(rank, nranks, me, &all, deadline));
  topology_ = TopologyFromPeers(all);
  if (LogEnabled(LogLevel::INFO, INIT)) {
    bool anyIntra = false, anyInter = false;
    const LinkInfo intra = topology_.slowestIntraHostLink(&anyIntra), inter = topology_.slowestInterHostLink(&anyInter);
    STRATA_LOG(INFO, INIT, "topology: %d ranks on %d host(s); this rank: host %d, local rank %d, NUMA node %d; "
               "slowest link within a host %s, between hosts %s", nranks, topology_.nhosts(), topology_.hostOf(rank),
               topology_.localRank(rank), topology_.numaOf(rank), anyIntra ? LinkClassName(intra.cls) : "none",
               anyInter ? LinkClassName(inter.cls) : "none");
  }
  // Ringers skip their fence only when every rank that may ring this doorbell takes the membarrier's
  // IPI; set before the barrier below, so before any peer rings.
  if (shm_)
    shm_->ownBell()->asymmetric.store(
        std::all_of(all.begin(), all.end(), [](const PeerInfo& p) { return p.asymmetricBell != 0; }) ? 1 : 0,
        std::memory_order_relaxed);
  Status st = setupConnections(all, listenIp, boot, deadline);
  Status barrier = boot.barrier(st.ok() ? strataSuccess : st.code(), deadline);
  if (shm_) shm_->unlinkOwn();
  tcp_->closeListener();
  STRATA_CHECK(st);
  STRATA_CHECK(barrier);
  monitor_.watch(all, rank_);
  if (shm_) monitor_.setDeparted([this](int r) { return shm_->peerDeparted(r); });
  startWatchdog();
  STRATA_CHECK(setupSelector());
  STRATA_LOG(INFO, INIT, "communicator ready: %d ranks, %s, %d channel(s), slots %d x %zu B", nranks,
             hasShmPeers_ ? "shared memory and/or TCP" : "TCP", geo_.nchannels, geo_.nslots, geo_.slotBytes);
  return Status::Ok();
}

Status Communicator::setupConnections(const std::vector<PeerInfo>& all, uint32_t listenIp, BootstrapClient& boot,
                                      Deadline deadline) {
  (void)listenIp;
  (void)boot;
  peers_ = all;
  const PeerInfo& r0 = all[0];
  geo_.nranks = nranks_;
  geo_.rank = rank_;
  geo_.slotBytes = r0.slotBytes;
  geo_.nslots = static_cast<int>(r0.nslots);
  geo_.nchannels = static_cast<int>(r0.nchannels);
  geo_.directMaxBytes = r0.directMaxBytes;
  geo_.oversubscribed = topology_.oversubscribed();
  geo_.ranksPerCpu = topology_.ranksPerCpu();
  // Hosts numbered in order of their first rank: the same table on every rank.
  std::map<std::string, int> hostIndex;
  geo_.hostOf.clear();
  for (const PeerInfo& p : all) geo_.hostOf.push_back(hostIndex.emplace(p.hostId, hostIndex.size()).first->second);
  for (int r = 0; r < nranks_; ++r) {
    const PeerInfo& p = all[r];
    STRATA_REQUIRE(p.slotBytes == r0.slotBytes && p.nslots == r0.nslots && p.nchannels == r0.nchannels &&
                       p.nsocks == r0.nsocks && p.shmDisable == r0.shmDisable && p.checkCalls == r0.checkCalls &&
                       p.selection == r0.selection && p.windowBytes == r0.windowBytes,
                   strataInvalidUsage,
                   "rank %d has different transport settings than rank 0 (STRATA_SLOT_BYTES, STRATA_NSLOTS, "
                   "STRATA_NCHANNELS, STRATA_NSOCKS_PERPEER, STRATA_SHM_DISABLE, STRATA_CHECK_CALLS, STRATA_CALIBRATE, "
                   "STRATA_TUNE and STRATA_WINDOW_BYTES must match on every rank)",
                   r);
  }
  for (int r = 0; r < nranks_; ++r)
    STRATA_REQUIRE(strcmp(all[r].quant, r0.quant) == 0 && all[r].quantMinBytes == r0.quantMinBytes, strataInvalidUsage,
                   "rank %d quantizes differently than rank 0 (%s, STRATA_QUANT_MIN_BYTES %llu vs %s, %llu): STRATA_QUANT, "
                   "STRATA_QUANT_MIN_BYTES and the config field quant must match on every rank",
                   r, all[r].quant, static_cast<unsigned long long>(all[r].quantMinBytes), r0.quant,
                   static_cast<unsigned long long>(r0.quantMinBytes));
  const std::string myHost = all[rank_].hostId;
  std::map<int, SockAddr> tcpPeers;
  send_.clear();
  recv_.clear();
  send_.resize(geo_.nchannels);
  recv_.resize(geo_.nchannels);
  for (int c = 0; c < geo_.nchannels; ++c) {
    send_[c].resize(nranks_);
    recv_[c].resize(nranks_);
  }
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_) continue;
    const bool local = !r0.shmDisable && myHost == all[r].hostId && all[r].shmName[0] && shm_;
    if (local) {
      STRATA_CHECK(shm_->attachPeer(r, r, all[r].shmName));
      hasShmPeers_ = true;
      for (int c = 0; c < geo_.nchannels; ++c) {
        shm_->prefault(c, r);
        send_[c][r] = shm_->makeSend(c, r);
        recv_[c][r] = shm_->makeRecv(c, r);
      }
    } else {
      SockAddr a;
      a.ip = all[r].ip;
      a.port = all[r].port;
      tcpPeers[r] = a;
    }
  }
  if (!tcpPeers.empty()) {
    TcpSetup setup;
    setup.myRank = rank_;
    setup.nranks = nranks_;
    memcpy(setup.secret, secret_, kSecretBytes);
    setup.nchannels = geo_.nchannels;
    setup.nsocks = static_cast<int>(r0.nsocks);
    setup.nslots = geo_.nslots;
    setup.slotBytes = geo_.slotBytes;
    STRATA_CHECK(tcp_->connectAll(setup, tcpPeers, deadline));
    for (const auto& p : tcpPeers)
      for (int c = 0; c < geo_.nchannels; ++c) {
        send_[c][p.first] = tcp_->makeSend(c, p.first);
        recv_[c][p.first] = tcp_->makeRecv(c, p.first);
      }
  }
  // Peer-mapped windows: only when every peer is mapped over shared memory.
  geo_.windowBytes = tcpPeers.empty() && shm_ && nranks_ > 1 ? r0.windowBytes : 0;
  int localRanks = 0;
  for (int r = 0; r < nranks_; ++r) localRanks += strcmp(all[rank_].machineId, all[r].machineId) == 0;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int ncpu = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  oversubscribed_ = localRanks > ncpu;
  STRATA_LOG(INFO, INIT, "%zu peer(s) over shared memory, %zu over TCP",
             static_cast<size_t>(nranks_ - 1 - tcpPeers.size()), tcpPeers.size());
  return Status::Ok();
}

SendConnection* Communicator::sendTo(int channel, int peer) {
  if (channel < 0 || channel >= static_cast<int>(send_.size()) || peer < 0 || peer >= nranks_) return nullptr;
  return send_[channel][peer].get();
}

PeerWindow* Communicator::windowOf(int rank) {
  if (!shm_ || geo_.windowBytes == 0 || rank < 0 || rank >= nranks_) return nullptr;
  return shm_->window(rank);
}

RecvConnection* Communicator::recvFrom(int channel, int peer) {
  if (channel < 0 || channel >= static_cast<int>(recv_.size()) || peer < 0 || peer >= nranks_) return nullptr;
  return recv_[channel][peer].get();
}

WaitPolicy Communicator::waitPolicy() const {
  WaitPolicy w;
  w.doorbell = hasShmPeers_ ? shm_->ownBell() : nullptr;
  w.abort = &aborted_;
  w.spinUs = settings_.spinUs;
  w.yieldUs = settings_.yieldUs;
  if (oversubscribed_) {
    // More ranks than cores here: a yielding rank still keeps a runnable peer waiting in the queue.
    w.yieldUs = std::min(w.yieldUs, 50);
  }
  w.timeoutMs = settings_.timeoutMs;
  w.liveness = monitor_.watchesAny() ? &monitor_ : nullptr;
  return w;
}

Communicator::PlanKey Communicator::PlanKeyOf(const CollDesc& desc) {
  return PlanKey(static_cast<int>(desc.kind), desc.count, static_cast<int>(desc.dtype), static_cast<int>(desc.op),
                 desc.root);
}

Status Communicator::cachedPlan(const CollDesc& desc, CachedPlan** out, ClassTrial** trial) {
  *trial = nullptr;
  AlgoId forced;
  const bool isForced = settings_.forced.get(desc.kind, &forced);
  // A size class decided on its calls: while its trial runs, the candidate whose turn it is.
  if (!isForced && !classTrials_.empty()) {
    ClassTrial* t = classTrialOf(desc);
    if (t) {
      t->trial.begin();
      if (!t->trial.decided()) {
        *trial = t;
        return trialPlan(desc, t->candidates[t->trial.next()], out);
      }
    }
  }
  const PlanKey key = PlanKeyOf(desc);
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    if (plans_.size() > 256) plans_.clear();  // bounded: plans of very large buffers are long
    if (isForced) {
      it = plans_.emplace(key, CachedPlan{BuildCollectivePlan(desc, geo_, settings_.forced), nullptr}).first;
      STRATA_LOG(INFO, TUNING, "%s of %llu elements: %s (forced %s)", CollKindName(desc.kind),
                 static_cast<unsigned long long>(desc.count), it->second.plan.algorithm.c_str(),
                 GetAlgoInfo(forced).name);
    } else {
      const uint64_t bytes = SelectorBytes(desc, nranks_);
      AlgoId id;
      ChoiceHow how = ChoiceHow::kModel;
      std::vector<AlgoId> onCalls;
      STRATA_CHECK(chooseAlgorithm(desc.kind, bytes, &id, &how, &onCalls));
      if (!onCalls.empty()) {
        ClassTrial* t = startClassTrial(desc, onCalls);
        t->trial.begin();
        *trial = t;
        return trialPlan(desc, t->candidates[t->trial.next()], out);
      }
      it = plans_.emplace(key, CachedPlan{BuildPlanWith(id, desc, geo_), nullptr}).first;
      STRATA_LOG(INFO, TUNING, "%s of %llu elements (%llu B, size class %d): %s (selector %s %s, estimate %.1f us)",
                 CollKindName(desc.kind), static_cast<unsigned long long>(desc.count),
                 static_cast<unsigned long long>(bytes), SizeClass(bytes), it->second.plan.algorithm.c_str(),
                 how == ChoiceHow::kTimed     ? "timed"
                 : how == ChoiceHow::kOnCalls ? "timed on the calls"
                                              : "picked",
                 GetAlgoInfo(id).name, selector_.estimateUs(id, desc.kind, bytes));
    }
    STRATA_CHECK(ResolveCached(plans_, it, this));
  }
  *out = &it->second;
  return Status::Ok();
}

PlanRunner Communicator::planRunner() {
  return [this](const Plan& plan, const void* send, void* recv) { return runPlan(plan, send, recv); };
}

Status Communicator::runPlan(const Plan& plan, const void* send, void* recv, std::optional<bool> streaming) {
  PlanRun run(plan, this);
  STRATA_CHECK(run.init());
  const size_t scratchBytes = plan.scratchElems * DataTypeSize(plan.dtype);
  if (scratch_.size() < scratchBytes) scratch_.resize(scratchBytes);
  void* buffers[3] = {const_cast<void*>(send), recv, scratch_.data()};
  run.start(buffers, plan.windowElems || plan.peerElems ? ++windowEpoch_ : 0);
  run.setStreamSlots(streaming ? *streaming : slotStores_->current(run.sharedSlotBytes()));
  return ExecuteRun(run, waitPolicy());
}

Status Communicator::chooseAlgorithm(CollKind kind, uint64_t bytes, AlgoId* out, ChoiceHow* how,
                                     std::vector<AlgoId>* onCalls) {
  ChoiceHow ignored;
  if (!how) how = &ignored;
  *how = ChoiceHow::kModel;
  bool measured = false;
  if (selector_.known(kind, bytes, out, &measured)) {
    if (measured) *how = classTrialKnown(kind, bytes) ? ChoiceHow::kOnCalls : ChoiceHow::kTimed;
    return Status::Ok();
  }
  const std::vector<AlgoId> candidates = selector_.candidates(kind, bytes);
  if (!settings_.tune || nranks_ < 2 || candidates.size() < 2) {
    *out = selector_.choose(kind, bytes);
    return Status::Ok();
  }
  // Every candidate runs the class's power of two as float32 sums (root 0), on buffers of its own: at least one
  // element.
  const uint64_t at = ClassBytes(bytes);
  CollDesc d;
  d.kind = kind;
  d.dtype = strataFloat32;
  d.op = strataSum;
  const bool perRank = kind == CollKind::AllGather || kind == CollKind::ReduceScatter;
  d.count = std::max<uint64_t>(1, perRank ? at / sizeof(float) / nranks_ : at / sizeof(float));
  std::vector<Plan> built;
  std::vector<AlgoId> fits;
  // By the model, each at least the model's choice's; the window algorithms at the model's choice's (their estimates
  // above kWindowAlgoSelectMaxBytes rank nothing, see AlgoSelector::candidates).
  std::vector<double> usPerRun;
  std::vector<bool> droppable;  // the model's close alternatives; its choice and those timed wherever they fit stay
  const double pickUs = selector_.estimateUs(candidates[0], kind, at);
  for (AlgoId id : candidates) {
    Plan plan = BuildPlanWith(id, d, geo_);
    if (plan.algorithm != GetAlgoInfo(id).name) continue;  // a fallback: this shape does not fit it
    built.push_back(std::move(plan));
    fits.push_back(id);
    usPerRun.push_back(IsWindowAlgo(id) ? pickUs : std::max(selector_.estimateUs(id, kind, at), pickUs));
    droppable.push_back(fits.size() > 1 && !selector_.timedWherever(id, kind, at));
  }
  std::vector<size_t> keep;
  // Light timing only between hosts (see TimingWithin).
  const double lightBudgetUs = topology_.nhosts() > 1 ? kLightMeasureBudgetUs : 0;
  const TimingPattern pattern = TimingWithin(kMeasureBudgetUs, usPerRun, droppable, !perRank, lightBudgetUs, &keep);
  if (fits.size() >= 2 && decidesOnCalls(pattern)) {
    *out = candidates[0];
    *how = ChoiceHow::kOnCalls;
    if (onCalls) *onCalls = fits;
    return Status::Ok();
  }
  if (pattern.rounds == 0) {
    *out = selector_.choose(kind, bytes);
    return Status::Ok();
  }
  std::vector<Plan> plans;
  std::vector<AlgoId> timed;
  for (size_t i : keep) {
    plans.push_back(std::move(built[i]));
    timed.push_back(fits[i]);
  }
  std::vector<float> send(SendElems(d, nranks_), 1.0f);
  std::vector<float> recv(RecvElems(d, nranks_));
  const uint64_t t0 = NowNs();
  const PlanRunner runner = planRunner();
  std::vector<double> us;
  Status st = TimePlansAlike(geo_, runner, plans, send.data(), recv.data(), pattern, &us);
  const std::vector<double> first = us;
  std::vector<size_t> again;
  if (st.ok())
    st = LookAgainAtCloseCall(geo_, runner, plans, send.data(), recv.data(), kMeasureBudgetUs, !perRank, lightBudgetUs,
                              kMeasureCloseCall, &us, &again);
  if (!st.ok()) return MakeError(st.code(), "timing %s algorithms: %s", CollKindName(kind), st.message().c_str());
  *out = selector_.settle(kind, bytes, timed, us);
  *how = ChoiceHow::kTimed;
  if (LogEnabled(LogLevel::INFO, TUNING)) {
    std::string times;
    char buf[96];
    for (size_t i = 0; i < timed.size(); ++i) {
      snprintf(buf, sizeof buf, "%s%s %.1f us", i ? ", " : "", GetAlgoInfo(timed[i]).name, first[i]);
      times += buf;
    }
    for (size_t k = 0; k < again.size(); ++k) {
      snprintf(buf, sizeof buf, "%s%s %.1f us",
               k ? ", " : "; close, timed again, the means: ", GetAlgoInfo(timed[again[k]]).name, us[again[k]]);
      times += buf;
    }
    for (size_t i = 0; i < timed.size() && !again.empty(); ++i) {
      if (i == again[0] || i == again[1] || !(first[i] > 0)) continue;
      snprintf(buf, sizeof buf, ", the others x %.2f as the pair", us[i] / first[i]);
      times += buf;
      break;
    }
    for (size_t i = 0; i < timed.size(); ++i) {
      const double floorUs = selector_.timedFloorUs(timed[i], kind, at);
      if (us[i] > 0 && us[i] < floorUs) {
        snprintf(buf, sizeof buf, "; %s counted at %.1f us (its bytes across hosts at the link's rate)",
                 GetAlgoInfo(timed[i]).name, floorUs);
        times += buf;
      }
    }
    // The candidates whose timing settle scaled (AlgoSelector::timedScale), grouped by why, each group with its factor.
    using Why = AlgoSelector::ScaleWhy;
    struct Scaled {
      Why why;
      const char* because;
      std::string names;
      double scale = 1.0;
    };
    Scaled groups[] = {{Why::kBesideWindows, "beside the window algorithms (timed on warm buffers)", {}},
                       {Why::kInPlace, "in place (its peer's pages warm in the timing)", {}},
                       {Why::kBesideLeader, "beside hier_leader", {}},
                       {Why::kBesideSmallOneshot, "beside oneshot (the small sizes' margin)", {}},
                       {Why::kRdBesideRhd, "beside rhd (warm buffers hide rd's bytes)", {}}};
    for (size_t i = 0; i < timed.size(); ++i) {
      Why why = Why::kNone;
      const double scale = us[i] > 0 ? selector_.timedScale(timed[i], kind, at, timed, us, &why) : 1.0;
      for (Scaled& g : groups)
        if (g.why == why) {
          g.names += (g.names.empty() ? "; " : ", ") + std::string(GetAlgoInfo(timed[i]).name);
          g.scale = scale;
        }
    }
    for (const Scaled& g : groups) {
      if (g.names.empty()) continue;
      snprintf(buf, sizeof buf, " counted x %.2f %s", g.scale, g.because);
      times += g.names + buf;
    }
    STRATA_LOG(INFO, TUNING, "%s, size class %d (%llu B): timed %s in %.1f ms%s: %s (the model's choice %s)",
               CollKindName(kind), SizeClass(bytes), static_cast<unsigned long long>(at), times.c_str(),
               static_cast<double>(NowNs() - t0) / 1e6,
               pattern.settle ? "" : " (light: out of place, no settling call)", GetAlgoInfo(*out).name,
               GetAlgoInfo(candidates[0]).name);
  }
  return Status::Ok();
}

Status Communicator::allRanksAgree(const bool* mine, bool* all, int n) {
  int32_t in[kMaxAgreed] = {}, out[kMaxAgreed] = {};
  STRATA_REQUIRE(n >= 1 && n <= kMaxAgreed, strataInternalError, "%d flags to agree on (1-%d)", n, kMaxAgreed);
  for (int i = 0; i < n; ++i) in[i] = mine[i] ? 1 : 0;
  CollDesc d;
  d.kind = CollKind::AllReduce;
  d.count = static_cast<uint64_t>(n);
  d.dtype = strataInt32;
  d.op = strataMin;
  STRATA_CHECK(runPlan(RingAllReducePlan(d, geo_), in, out));
  for (int i = 0; i < n; ++i) all[i] = out[i] == 1;
  return Status::Ok();
}

Status Communicator::agreeOnPeerAccess() {
  if (geo_.windowBytes == 0 || !shm_) return Status::Ok();
  // Plans must agree on every rank: one rank that cannot reach a peer (or has STRATA_CMA=0) turns it off for all.
  const bool mine = settings_.cma && shm_->reachesPeers();
  Status st = allRanksAgree(mine, &geo_.peerAccess);
  if (!st.ok()) return MakeError(st.code(), "agreeing on cross-memory attach: %s", st.message().c_str());
  STRATA_LOG(INFO, INIT, "cross-memory attach between the ranks of this host: %s",
             geo_.peerAccess  ? "on"
             : !settings_.cma ? "off (STRATA_CMA=0 here)"
             : mine           ? "off (not on every rank)"
                              : "off (the kernel refused it)");
  return Status::Ok();
}

Status Communicator::setupSelector() {
  STRATA_CHECK(agreeOnPeerAccess());
  CostInputs in = CostInputsFromGeometry(geo_);
  // The topology's link classes first (they hold for any size); the calibration then measures the
  // slowest link the ring crosses.
  bool anyIntra = false, anyInter = false;
  const LinkInfo intra = topology_.slowestIntraHostLink(&anyIntra), inter = topology_.slowestInterHostLink(&anyInter);
  if (anyIntra && intra.bandwidthGBs > 0) in.intra = LinkCost{intra.latencyUs, intra.bandwidthGBs};
  if (anyInter && inter.bandwidthGBs > 0) in.inter = LinkCost{inter.latencyUs, inter.bandwidthGBs};
  if (settings_.calibrate && nranks_ > 1) {
    // Every rank runs the slot-store probe's calls, whatever its STRATA_SLOT_STORES (ranks need not agree on it); a
    // rank at auto starts its tuner in the faster mode (within a process every communicator at auto shares the tuner,
    // and the last probe decides the classes not yet begun).
    SlotStoreProbe stores;
    stores.run = [this](const Plan& plan, const void* send, void* recv, bool streaming) {
      return runPlan(plan, send, recv, streaming);
    };
    if (settings_.slotStores == SlotStores::kAuto)
      stores.startIn = [this](bool streaming) { slotStores_->startIn(streaming); };
    Status st = CalibrateCostInputs(geo_, planRunner(), &in, &calibration_, stores);
    if (!st.ok()) return MakeError(st.code(), "calibrating the cost model: %s", st.message().c_str());
    STRATA_LOG(INFO, TUNING,
               "calibration took %.1f ms (local rates and buffers %.1f ms, waiting for the last rank %.1f ms, "
               "small calls %.1f ms, large %.1f ms): %llu B ring allreduce %.1f us, %llu B %.1f us",
               calibration_.elapsedMs, calibration_.localMs, calibration_.waitMs, calibration_.smallMs,
               calibration_.largeMs, static_cast<unsigned long long>(calibration_.smallBytes), calibration_.ringSmallUs,
               static_cast<unsigned long long>(calibration_.largeBytes), calibration_.ringLargeUs);
    if (calibration_.wideBytes > 0)
      STRATA_LOG(INFO, TUNING, "calibration between hosts: %llu B ring allreduce %.1f us, %s %.1f us (%.1f ms)",
                 static_cast<unsigned long long>(calibration_.wideBytes), calibration_.ringWideUs,
                 nranks_ >= 3 ? "rhd" : "rd", calibration_.recursiveWideUs, calibration_.wideMs);
    if (calibration_.slotCachedUs > 0)
      STRATA_LOG(INFO, TUNING,
                 "shared-memory slots: the %llu B ring ran %.1f us with ordinary stores, %.1f with streaming "
                 "ones here: %s stores to start with%s",
                 static_cast<unsigned long long>(calibration_.largeBytes), calibration_.slotCachedUs,
                 calibration_.slotStreamingUs,
                 SlotStoresName(calibration_.slotStreaming ? SlotStores::kStreaming : SlotStores::kCached),
                 settings_.slotStores == SlotStores::kAuto ? "" : " (not here: STRATA_SLOT_STORES is not auto)");
  }
  STRATA_LOG(INFO, TUNING, "cost model: %s", DescribeCostInputs(in).c_str());
  selector_.reset(in);
  return Status::Ok();
}

Status Communicator::reportFailure(const Status& st, const std::string& what) {
  STRATA_LOG(WARN, COLL, "%s failed: %s", what.c_str(), st.message().c_str());
  Status out = MakeError(st.code(), "%s: %s", what.c_str(), st.message().c_str());
  // Data was moving: the FIFOs of this communicator are out of step with the peers' now.
  if (st.code() != strataCommAborted) setAsyncError(out);
  return out;
}

Status Communicator::execute(const CollDesc& desc, const void* send, void* recv) {
  CachedPlan* selectors = nullptr;
  ClassTrial* classTrial = nullptr;
  STRATA_CHECK(cachedPlan(desc, &selectors, &classTrial));
  CachedPlan* cached = selectors;
  InPlaceTrial* trial = nullptr;
  // A class trial's candidate runs as it is (no in-place trial beside it), but one that reaches its peers' buffers
  // counts the call towards their move onto huge pages, as it would once chosen.
  bool settled = true;
  if (!classTrial || selectors->plan.peerElems > 0)
    STRATA_CHECK(inPlaceBufferPlan(desc, send, recv, selectors, &cached, &trial, &settled));
  const size_t scratchBytes = cached->plan.scratchElems * DataTypeSize(desc.dtype);
  if (scratch_.size() < scratchBytes) scratch_.resize(scratchBytes);
  void* buffers[3] = {const_cast<void*>(send), recv, scratch_.data()};
  PlanRun& run = *cached->run;
  run.start(buffers, cached->plan.windowElems || cached->plan.peerElems ? ++windowEpoch_ : 0);
  lastAlgorithm_ = cached->plan.algorithm;
  const uint64_t shared = run.sharedSlotBytes();
  const SlotStoreTuner::Call stores = slotStores_->begin(shared);
  run.setStreamSlots(stores.streaming);
  const bool tunesStores = slotStores_->tunes(shared);
  if (!tunesStores && !trial && !classTrial) return ExecuteRun(run, waitPolicy());
  const uint64_t t0 = NowNs();
  Status st = ExecuteRun(run, waitPolicy());
  const uint64_t ns = NowNs() - t0;
  if (!st.ok()) return st;
  if (tunesStores) slotStores_->end(shared, stores, ns);
  if (trial) {
    trial->record(static_cast<double>(ns) / 1e3);
    if (trial->due()) {
      st = settleTrial(desc, selectors->plan.algorithm, trial);
      if (!st.ok()) return MakeError(st.code(), "settling the in-place trial: %s", st.message().c_str());
    }
  }
  if (classTrial) {
    const uint64_t bytes = std::max<uint64_t>(1, SelectorBytes(desc, nranks_));
    // A candidate that reaches its peers' buffers, on buffers that may yet move onto huge pages (some rank's): this
    // call does not show what its calls will cost once they have, and the same candidate runs the next call. The
    // ranks agree (one small allreduce), since every rank's trial must stay in step; the same shape on every rank.
    if (selectors->plan.peerElems > 0 && bytes >= kHugePageBytes && bytes <= kHugePageMaxInPlaceBytes &&
        classTrial->unsettled < kMaxUnsettledTrialCalls) {
      bool all = true;
      STRATA_CHECK(allRanksAgree(settled, &all));
      if (!all) {
        ++classTrial->unsettled;
        return Status::Ok();
      }
    }
    // Per byte of the class's power of two, so that calls of other sizes in the class count alike.
    classTrial->trial.record(static_cast<double>(ns) / 1e3 * static_cast<double>(ClassBytes(bytes)) /
                             static_cast<double>(bytes));
    if (classTrial->trial.due()) {
      st = settleClassTrial(desc, classTrial);
      if (!st.ok()) return MakeError(st.code(), "settling the size class's trial: %s", st.message().c_str());
    }
  }
  return Status::Ok();
}

Status Communicator::executeQuant(const CollDesc& desc, const QuantSpec& spec, const void* send, void* recv) {
  auto key = std::make_tuple(static_cast<int>(desc.kind), desc.count, static_cast<int>(desc.dtype),
                             static_cast<int>(desc.op), QuantSpecString(spec));
  auto it = quantPlans_.find(key);
  if (it == quantPlans_.end()) {
    if (quantPlans_.size() > 64) quantPlans_.clear();
    // Several hosts: exact within each, quantized between them (qhier runs qdirect on shapes it does not fit).
    const QuantAlgo algo = topology_.nhosts() > 1 ? QuantAlgo::Hier : QuantAlgo::Direct;
    it = quantPlans_.emplace(key, CachedQuantPlan{BuildQuantPlan(algo, desc, geo_, spec.params), nullptr}).first;
    STRATA_LOG(INFO, TUNING, "%s of %llu elements: %s with %s", CollKindName(desc.kind),
               static_cast<unsigned long long>(desc.count), it->second.plan.algorithm.c_str(),
               QuantSpecString(spec).c_str());
    it->second.run = std::make_unique<QuantPlanRun>(it->second.plan, this);
    Status st = it->second.run->init();
    if (!st.ok()) {
      quantPlans_.erase(it);
      return st;
    }
  }
  const QuantPlan& plan = it->second.plan;
  if (quantAcc_.size() < plan.accElems) quantAcc_.resize(plan.accElems);
  if (quantEnc_.size() < plan.encBytes) quantEnc_.resize(plan.encBytes);
  void* buffers[kQNumBufs] = {const_cast<void*>(send), recv, quantAcc_.data(), quantEnc_.data()};
  it->second.run->start(buffers, quantCalls_++);
  lastAlgorithm_ = plan.algorithm;
  return ExecuteRun(*it->second.run, waitPolicy());
}

Status Communicator::checkCall(const CollDesc& desc, const QuantSpec& quant) {
  const CallSignature mine = MakeSignature(desc, checkedCalls_++, quant);
  std::vector<CallSignature> all(nranks_);
  CollDesc ag;
  ag.kind = CollKind::AllGather;
  ag.count = sizeof(CallSignature);
  ag.dtype = strataUint8;
  Status st = execute(ag, &mine, all.data());
  if (!st.ok()) return reportFailure(st, DescribeCall(desc) + " (exchanging call signatures)");
  // Every rank holds the same table, so every rank returns the same verdict and the communicator
  // stays usable: no data of the mismatched call has moved.
  Status verdict = CompareSignatures(all);
  if (!verdict.ok()) {
    STRATA_LOG(WARN, COLL, "%s refused: %s", DescribeCall(desc).c_str(), verdict.message().c_str());
    return MakeError(verdict.code(), "%s refused: %s", DescribeCall(desc).c_str(), verdict.message().c_str());
  }
  return Status::Ok();
}

Status Communicator::chooseQuant(const CollDesc& desc, const QuantSpec* callQuant, QuantSpec* chosen) {
  *chosen = QuantSpec{};
  if (!QuantAlgoServes(desc.kind)) return Status::Ok();
  const QuantSpec& requested = callQuant ? *callQuant : settings_.quant;
  if (!requested.enabled) return Status::Ok();
  const QuantSource source = callQuant ? QuantSource::kCall : settings_.quantSource;
  // Between ranks of one host the data crosses shared memory at memory speed, where encoding costs more
  // than the bytes it saves: a spec that covers every call keeps those exact. A call's own spec is obeyed.
  if (source != QuantSource::kCall && topology_.nhosts() == 1) {
    if (!loggedQuantOneHost_)
      STRATA_LOG(INFO, TUNING, "quantization %s not used: every rank is on one host (shared memory), calls run exact",
                 QuantSpecString(requested).c_str());
    loggedQuantOneHost_ = true;
    return Status::Ok();
  }
  const uint64_t elems = desc.kind == CollKind::AllReduce ? desc.count : desc.count * static_cast<uint64_t>(nranks_);
  QuantSpec resolved;
  STRATA_CHECK(ResolveQuantSpec(requested, source, desc.dtype, desc.op, elems * DataTypeSize(desc.dtype),
                                settings_.quantMinBytes, &resolved));
  if (!resolved.enabled || nranks_ == 1) return Status::Ok();
  *chosen = resolved;
  return Status::Ok();
}

Status Communicator::runCollective(const CollDesc& desc, const void* send, void* recv, const QuantSpec* callQuant) {
  STRATA_REQUIRE(!aborted(), strataCommAborted, "the communicator was aborted");
  STRATA_CHECK(failIfBroken(CollKindName(desc.kind)));
  QuantSpec quant;
  STRATA_CHECK(chooseQuant(desc, callQuant, &quant));
  if (settings_.checkCalls && nranks_ > 1) STRATA_CHECK(checkCall(desc, quant));
  Status st = quant.enabled ? executeQuant(desc, quant, send, recv) : execute(desc, send, recv);
  return st.ok() ? st : reportFailure(st, DescribeCall(desc));
}

Status Communicator::runP2P(const std::vector<P2POp>& ops) {
  STRATA_REQUIRE(!aborted(), strataCommAborted, "the communicator was aborted");
  STRATA_CHECK(failIfBroken("Send/Recv group"));
  // An operation's buffer id is its index, below the ids of the peers' windows (kWindowBuf + rank).
  STRATA_REQUIRE(ops.size() <= kWindowBuf, strataInvalidUsage,
                 "a group holds %zu send/recv operations on one communicator (at most %d)", ops.size(),
                 static_cast<int>(kWindowBuf));
  // One buffer per operation; one queue per (peer, direction) so that operations to one peer keep
  // their order and different peers never wait on each other.
  Plan plan;
  plan.algorithm = "p2p";
  plan.dtype = strataUint8;
  plan.nBuffers = static_cast<int>(ops.size());
  std::vector<void*> buffers;
  std::map<std::pair<int, bool>, size_t> queueOf;
  std::vector<size_t> selfSends, selfRecvs;
  for (size_t i = 0; i < ops.size(); ++i) {
    const P2POp& op = ops[i];
    buffers.push_back(op.buf);
    const uint64_t bytes = op.count * DataTypeSize(op.dtype);
    if (op.peer == rank_) {
      (op.isSend ? selfSends : selfRecvs).push_back(i);
      continue;
    }
    auto key = std::make_pair(op.peer, op.isSend);
    auto it = queueOf.find(key);
    if (it == queueOf.end()) {
      it = queueOf.emplace(key, plan.queues.size()).first;
      plan.addQueue(0);
    }
    Step s;
    s.op = op.isSend ? StepOp::Send : StepOp::Recv;
    (op.isSend ? s.sendPeer : s.recvPeer) = op.peer;
    (op.isSend ? s.src : s.dst) = BufRef{static_cast<uint16_t>(i), 0};
    s.count = bytes;
    if (bytes) plan.queues[it->second].steps.push_back(s);
  }
  STRATA_REQUIRE(selfSends.size() == selfRecvs.size(), strataInvalidUsage,
                 "a group has %zu send(s) to this rank itself but %zu receive(s) from it", selfSends.size(),
                 selfRecvs.size());
  for (size_t k = 0; k < selfSends.size(); ++k) {
    const P2POp& s = ops[selfSends[k]];
    const P2POp& r = ops[selfRecvs[k]];
    const uint64_t sb = s.count * DataTypeSize(s.dtype), rb = r.count * DataTypeSize(r.dtype);
    STRATA_REQUIRE(sb == rb, strataInvalidUsage, "send to self of %llu bytes matched with a receive of %llu bytes",
                   static_cast<unsigned long long>(sb), static_cast<unsigned long long>(rb));
    Step c;
    c.op = StepOp::Copy;
    c.src = BufRef{static_cast<uint16_t>(selfSends[k]), 0};
    c.dst = BufRef{static_cast<uint16_t>(selfRecvs[k]), 0};
    c.count = sb;
    if (sb) plan.addQueue(0).steps.push_back(c);
  }
  Status st = ExecutePlan(plan, buffers.data(), this, waitPolicy());
  return st.ok() ? st : reportFailure(st, "Send/Recv group");
}

}  // namespace strata
