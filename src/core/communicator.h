// The communicator: rank, peers, transports and the connections between them, the wait policy, and
// the cache of plans. The API layer turns calls into CollDesc and asks it to run them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "algorithms/algo_spec.h"
#include "algorithms/collective.h"
#include "algorithms/plan.h"
#include "algorithms/selector.h"
#include "core/bootstrap.h"
#include "core/calibration.h"
#include "core/call_trial.h"
#include "core/in_place_trial.h"
#include "core/peer_monitor.h"
#include "core/status.h"
#include "exec/executor.h"
#include "exec/plan_run.h"
#include "exec/quant/quant_plan_run.h"
#include "exec/quant/quant_spec.h"
#include "exec/slot_store_tuner.h"
#include "topology/comm_topology.h"
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
  size_t windowBytes = 1 << 20;  // STRATA_WINDOW_BYTES
  bool cma = true;               // STRATA_CMA
  int hugePagesAfter = 3;        // STRATA_HUGE_PAGES
  int spinUs = 10;
  int yieldUs = 2000;
  bool checkCalls = false;  // STRATA_CHECK_CALLS
  bool calibrate = true;    // STRATA_CALIBRATE
  bool tune = true;         // STRATA_TUNE: time the model's close candidates (a size class's first call, or its calls)
  SlotStores slotStores = SlotStores::kAuto;  // STRATA_SLOT_STORES
  std::string name;
  std::string socketIfname;
  ForcedAlgos forced;  // STRATA_ALGO, or the config field `algorithm`
  QuantSpec quant;     // the config field `quant`, else STRATA_QUANT
  QuantSource quantSource = QuantSource::kEnv;
  uint64_t quantMinBytes = 1 << 20;  // STRATA_QUANT_MIN_BYTES
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
  // Where every rank runs and the links between them, the same on every rank (src/topology).
  const CommTopology& topology() const { return topology_; }

  // Runs a collective on host buffers; blocks until done. `callQuant`: the call's own quantization spec
  // (strataAllReduceEx and friends), else the communicator's applies.
  Status runCollective(const CollDesc& desc, const void* send, void* recv, const QuantSpec* callQuant = nullptr);
  // The spec `desc` runs with (disabled: exact): see docs/QUANTIZATION.md, "Which calls".
  Status chooseQuant(const CollDesc& desc, const QuantSpec* callQuant, QuantSpec* chosen);
  // Runs a group's send/recv operations together.
  Status runP2P(const std::vector<P2POp>& ops);

  void abort() { aborted_.store(true); }
  bool aborted() const { return aborted_.load(); }
  // The first error that broke the communicator: found by the watchdog thread (a peer process
  // died) or by a collective that failed after data started moving. Ok while healthy.
  Status asyncError() const;
  // The selector's inputs (shape, link costs: calibrated at init unless STRATA_CALIBRATE=0) and what
  // the calibration measured; the same on every rank.
  const CostInputs& costInputs() const { return selector_.inputs(); }
  const CalibrationReport& calibration() const { return calibration_; }
  // The algorithm the selector runs for `kind` on `bytes` (the whole vector: SelectorBytes), forced algorithms
  // aside: the size class's choice when it has one, else the cost model's, or, where the model's leading
  // algorithms are close (AlgoSelector::candidates) and STRATA_TUNE is on, the fastest of them timed now by every
  // rank. So it is a collective call: every rank makes it at the same point, as the collective that asks does.
  // `*how` (optional): how the class's choice was made. On one host, a class whose close candidates are decided on
  // its calls (decidesOnCalls) is not timed here: *how is kOnCalls, *out the model's choice for now, and `onCalls`
  // (optional) gets the candidates, which the caller's trial (ClassTrial) then runs on the class's first calls.
  enum class ChoiceHow { kModel, kTimed, kOnCalls };
  Status chooseAlgorithm(CollKind kind, uint64_t bytes, AlgoId* out, ChoiceHow* how = nullptr,
                         std::vector<AlgoId>* onCalls = nullptr);
  // The algorithm of the last collective this communicator ran ("" before the first).
  const std::string& lastAlgorithm() const { return lastAlgorithm_; }
  // Descriptors the peer monitor holds: one pidfd per peer process on this machine.
  size_t peerMonitorFds() const { return monitor_.descriptors(); }

  SendConnection* sendTo(int channel, int peer) override;
  RecvConnection* recvFrom(int channel, int peer) override;
  PeerWindow* windowOf(int rank) override;

 private:
  Status setupConnections(const std::vector<PeerInfo>& all, uint32_t listenIp, BootstrapClient& boot,
                          Deadline deadline);
  // A plan with its connections resolved, reused by every call with the same shape.
  struct CachedPlan {
    Plan plan;
    std::unique_ptr<PlanRun> run;
  };
  // A size class of one host decided on its calls: its candidates (the model's choice first) take turns on the
  // class's calls (CallTrial), and the ranks' figures decide. Kept after the decision, to start over now and then.
  struct ClassTrial {
    CollKind kind;
    uint64_t classBytes;
    std::vector<AlgoId> candidates;
    CallTrial trial;
    int unsettled = 0;  // calls not counted: some rank's buffers were still to move onto huge pages
  };
  // How a class trial's calls fall into turns: two turns of four calls a candidate, the last three counted. In turns
  // of two (CallTrial::kPairTurns) the second call of a turn still showed a plan apart from a stream of its calls: on
  // 4 ranks of the 2-core VM at 1 MiB rhd ran 818-1027 us as a turn's second call and 1106-1244 sixteen calls in a row,
  // twoshot 648-711 and 778-804 (docs/PERFORMANCE.md, "Thirty-seventh session"). In 25 launches each of selector_perf
  // (256 KiB - 1 MiB) on those 4 ranks, trials at 512 KiB and 1 MiB in turns of two kept the ring where forced twoshot
  // ran faster in 6 trials of 48 (4 over 1.10x), turns of four in 3 of 48 (none over 1.10x), with six counted calls a
  // candidate instead of four and as many calls ("Thirty-ninth session").
  static constexpr CallTrial::Shape kClassTrialTurns = CallTrial::kRunTurns;
  // The calls a class trial leaves uncounted at most while buffers are still to move onto huge pages (a candidate that
  // reaches its peers' buffers by cross-memory attach runs there without the kernel's page pinning once they have).
  static constexpr int kMaxUnsettledTrialCalls = 512;
  // The plan of `desc`: the forced one, the selector's (cached by shape), or, while `desc`'s size class is on trial,
  // the candidate whose turn it is, with *trial that trial (execute() times the call for it); else *trial is null.
  Status cachedPlan(const CollDesc& desc, CachedPlan** out, ClassTrial** trial);
  // Whether chooseAlgorithm leaves a class of two candidates or more to a trial on its calls, given the timing it
  // would run at the first call (`pattern`; no rounds: none fits the budget): on one host, where the budget leaves
  // the class untimed.
  bool decidesOnCalls(const TimingPattern& pattern) const;
  // The trial of `desc`'s size class, if it has one; a new one among `candidates`.
  ClassTrial* classTrialOf(const CollDesc& desc);
  ClassTrial* startClassTrial(const CollDesc& desc, const std::vector<AlgoId>& candidates);
  // Whether the class of `bytes` has a decided trial (its choice was made on the calls).
  bool classTrialKnown(CollKind kind, uint64_t bytes) const;
  // `id`'s plan for `desc`, cached by shape and algorithm for the trials.
  Status trialPlan(const CollDesc& desc, AlgoId id, CachedPlan** out);
  // The ranks' figures of a due class trial gathered (one ring allgather), the winner recorded as the class's choice
  // (the plans cached for the class dropped, to be built with it), the outcome logged (TUNING).
  Status settleClassTrial(const CollDesc& desc, ClassTrial* trial);
  // Whether each of the n flags mine[i] holds on every rank, into all[i] (one ring allreduce of n 4-byte minima,
  // outside the plan cache; n at most kMaxAgreed).
  static constexpr int kMaxAgreed = 4;
  Status allRanksAgree(const bool* mine, bool* all, int n);
  Status allRanksAgree(bool mine, bool* all) { return allRanksAgree(&mine, all, 1); }
  // Sets geo_.peerAccess: whether every rank reaches its peers' memory by cross-memory attach (one tiny allreduce).
  Status agreeOnPeerAccess();
  // Where `cached` (the selector's plan for `desc`) does not go in place but could, and the call is large enough
  // (kSharedBufferAgreeMinBytes) for one small allreduce more to cost little: the ranks agree whether every one of
  // them passed buffers its peers reach without the kernel pinning page after page (from strataMemAlloc, which peers
  // map and reach with plain loads and stores, or on huge pages, STRATA_HUGE_PAGES), and whether each passed them in
  // place. If so, the in-place plan (twoshot, oneshot) may run: with STRATA_TUNE, *out is the plan the shape's trial
  // (by shape and placement) names, and *trial that trial while it runs (execute() times the call for it); without,
  // *out is the in-place plan. Else *out is `cached` and *trial null. Wherever peers reach this call's buffers, it
  // counts the call towards their move onto huge pages (HugePagesFor).
  // `*settled` (optional): false where a buffer of the call could still move onto huge pages (it has not yet, and may).
  Status inPlaceBufferPlan(const CollDesc& desc, const void* send, const void* recv, CachedPlan* cached,
                           CachedPlan** out, InPlaceTrial** trial, bool* settled = nullptr);
  // The ranks' figures of a due trial gathered and summed (one ring allgather), the trial settled and its outcome
  // logged (TUNING).
  Status settleTrial(const CollDesc& desc, const std::string& selectors, InPlaceTrial* trial);
  // Runs one plan outside the cache (calibration), with scratch sized for it; its shared slots written in the
  // slot-store tuner's mode, or with streaming stores or not as `streaming` says (the calibration's probe of the two).
  Status runPlan(const Plan& plan, const void* send, void* recv, std::optional<bool> streaming = std::nullopt);
  // runPlan in the slot-store tuner's mode, as the calibration's and the selector's timings take it.
  PlanRunner planRunner();
  // Cost inputs from the geometry and the topology's link classes, then calibrated when enabled.
  Status setupSelector();
  Status execute(const CollDesc& desc, const void* send, void* recv);
  Status executeQuant(const CollDesc& desc, const QuantSpec& spec, const void* send, void* recv);
  // A quantized plan with its run, reused by every call with the same shape and spec.
  struct CachedQuantPlan {
    QuantPlan plan;
    std::unique_ptr<QuantPlanRun> run;
  };
  Status checkCall(const CollDesc& desc, const QuantSpec& quant);
  Status reportFailure(const Status& st, const std::string& what);
  void setAsyncError(const Status& st);
  Status failIfBroken(const char* what) const;
  void startWatchdog();
  void stopWatchdog();
  WaitPolicy waitPolicy() const;

  int rank_ = 0, nranks_ = 1;
  uint8_t secret_[kSecretBytes] = {};  // from the unique id: every TCP connection proves it
  CommSettings settings_;
  PlanGeometry geo_;
  std::vector<PeerInfo> peers_;
  CommTopology topology_;
  AlgoSelector selector_;
  CalibrationReport calibration_;
  // How execute() writes shared-memory slots: SlotStoreTuner::Shared() at auto, else ownStores_.
  std::unique_ptr<SlotStoreTuner> ownStores_;
  SlotStoreTuner* slotStores_ = nullptr;
  std::unique_ptr<ShmTransport> shm_;
  std::unique_ptr<TcpTransport> tcp_;
  bool hasShmPeers_ = false;
  bool oversubscribed_ = false;  // more ranks on this host than CPUs we may run on
  // [channel][peer]
  std::vector<std::vector<std::unique_ptr<SendConnection>>> send_;
  std::vector<std::vector<std::unique_ptr<RecvConnection>>> recv_;
  std::atomic<bool> aborted_{false};
  std::vector<char> scratch_;
  // A collective's plans by its shape: kind, count, datatype, op and root (PlanKeyOf).
  using PlanKey = std::tuple<int, uint64_t, int, int, int>;
  static PlanKey PlanKeyOf(const CollDesc& desc);
  std::map<PlanKey, CachedPlan> plans_;
  // The in-place plans run instead of the selector's where every rank's buffers come from strataMemAlloc or lie on
  // huge pages (inPlaceBufferPlan).
  std::map<PlanKey, CachedPlan> inPlacePlans_;
  // Their trials against the selector's plans, by shape and placement (out of place, in place, mixed: as the ranks
  // agreed), while STRATA_TUNE is on.
  std::map<std::pair<PlanKey, int>, InPlaceTrial> inPlaceTrials_;
  // The size classes decided on their calls, by kind and size class, and their candidates' plans by shape and
  // algorithm.
  std::map<std::pair<int, int>, ClassTrial> classTrials_;
  std::map<std::pair<PlanKey, int>, CachedPlan> trialPlans_;
  std::map<std::tuple<int, uint64_t, int, int, std::string>, CachedQuantPlan> quantPlans_;
  std::vector<float> quantAcc_;    // fp32 accumulator of quantized plans
  std::vector<uint8_t> quantEnc_;  // their encoded ranges
  uint64_t quantCalls_ = 0;        // quantized calls so far: the same count on every rank
  bool loggedQuantOneHost_ = false;
  uint32_t checkedCalls_ = 0;
  uint64_t windowEpoch_ = 0;  // window-using calls so far: the same count on every rank
  std::string lastAlgorithm_;

  PeerMonitor monitor_;
  std::thread watchdog_;
  std::mutex watchMu_;
  std::condition_variable watchCv_;
  bool stopWatch_ = false;
  mutable std::mutex asyncMu_;
  std::atomic<bool> broken_{false};
  Status asyncError_;
};

// Host identity: STRATA_HOSTID, else MachineId().
std::string HostId();
// Hostname plus the kernel's boot id.
std::string MachineId();

}  // namespace strata
