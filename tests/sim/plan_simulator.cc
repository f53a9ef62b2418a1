#include "plan_simulator.h"

#include <cstring>
#include <map>
#include <tuple>

#include "algorithms/algorithms.h"
#include "exec/host_reduce.h"
#include "exec/plan_run.h"
#include "sim/sim_fifo.h"

namespace strata {

namespace {

// A rank's peer-mapped window in memory; nothing sleeps in the simulator, so waking is a no-op.
class SimWindow : public PeerWindow {
 public:
  explicit SimWindow(size_t halfBytes) : mem_(2 * halfBytes), half_(halfBytes) {}
  char* half(int h) override { return mem_.data() + (h & 1) * half_; }
  size_t halfBytes() const override { return half_; }
  uint64_t flag() const override { return flag_; }
  void raise(uint64_t value) override { flag_ = value; }
  void wake() override {}
  uint64_t shape(int h) const override { return shape_[h & 1]; }
  void setShape(int h, uint64_t value) override { shape_[h & 1] = value; }
  // Every simulated rank lives in this process: cross-memory attach is a plain copy.
  void publishBuffers(int h, const void* send, void* recv) override {
    buffers_[h & 1][0] = static_cast<char*>(const_cast<void*>(send));
    buffers_[h & 1][1] = static_cast<char*>(recv);
  }
  Status readPeer(int h, int buf, uint64_t offset, void* dst, size_t bytes) override {
    STRATA_REQUIRE(buffers_[h & 1][buf & 1], strataInternalError, "a peer read before the owner published");
    std::memcpy(dst, buffers_[h & 1][buf & 1] + offset, bytes);
    return Status::Ok();
  }
  Status writePeer(int h, int buf, uint64_t offset, const void* src, size_t bytes) override {
    STRATA_REQUIRE(buffers_[h & 1][buf & 1], strataInternalError, "a peer wrote before the owner published");
    std::memcpy(buffers_[h & 1][buf & 1] + offset, src, bytes);
    return Status::Ok();
  }

 private:
  std::vector<char> mem_;
  size_t half_;
  uint64_t flag_ = 0;
  uint64_t shape_[2] = {0, 0};
  char* buffers_[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};
};

// All FIFOs and windows of the simulated job; each rank sees its own ends.
class SimNetwork {
 public:
  SimNetwork(int nranks, const PlanGeometry& geo) : nranks_(nranks), geo_(geo), clock_(0x5eed0000u + nranks) {}
  SimClock& clock() { return clock_; }

  class View : public ConnectionTable {
   public:
    View(SimNetwork* net, int rank) : net_(net), rank_(rank) {}
    SendConnection* sendTo(int channel, int peer) override {
      SimLink* l = net_->link(rank_, peer, channel);
      return l ? l->send.get() : nullptr;
    }
    RecvConnection* recvFrom(int channel, int peer) override {
      SimLink* l = net_->link(peer, rank_, channel);
      return l ? l->recv.get() : nullptr;
    }
    PeerWindow* windowOf(int rank) override { return net_->window(rank); }

   private:
    SimNetwork* net_;
    int rank_;
  };

  ConnectionTable* view(int rank) {
    while (static_cast<int>(views_.size()) < nranks_)
      views_.push_back(std::make_unique<View>(this, static_cast<int>(views_.size())));
    return views_[rank].get();
  }

 private:
  PeerWindow* window(int rank) {
    if (geo_.windowBytes == 0 || rank < 0 || rank >= nranks_) return nullptr;
    if (windows_.empty())
      for (int r = 0; r < nranks_; ++r) windows_.push_back(std::make_unique<SimWindow>(geo_.windowBytes));
    return windows_[rank].get();
  }
  SimLink* link(int from, int to, int channel) {
    if (from == to || from < 0 || to < 0 || from >= nranks_ || to >= nranks_ || channel < 0 ||
        channel >= geo_.nchannels)
      return nullptr;
    SimLink& l = links_[std::make_tuple(from, to, channel)];
    if (!l.fifo) l.make(&clock_, from, to, geo_.nslots, geo_.slotBytes);
    return &l;
  }
  int nranks_;
  PlanGeometry geo_;
  SimClock clock_;
  std::map<std::tuple<int, int, int>, SimLink> links_;
  std::vector<std::unique_ptr<View>> views_;
  std::vector<std::unique_ptr<SimWindow>> windows_;
};

}  // namespace

Status SimulatePlans(const std::vector<Plan>& plans, const std::vector<std::vector<void*>>& bindings,
                     const PlanGeometry& geo) {
  const int n = static_cast<int>(plans.size());
  SimNetwork net(n, geo);
  std::vector<std::unique_ptr<PlanRun>> runs;
  for (int r = 0; r < n; ++r) {
    runs.push_back(std::make_unique<PlanRun>(plans[r], net.view(r)));
    STRATA_CHECK(runs[r]->init());
    runs[r]->start(bindings[r].data(), 1);  // one call: the first window epoch
  }
  return DriveRuns(runs, net.clock());
}

Status SimulateCollective(const CollDesc& desc, const PlanGeometry& geo, std::vector<SimRankBuffers>* buffers,
                          bool inPlace, const ForcedAlgos& forced, std::string* algorithm) {
  const int n = geo.nranks;
  const size_t esize = DataTypeSize(desc.dtype);
  std::vector<Plan> plans;
  std::vector<std::vector<char>> scratch(n);
  std::vector<std::vector<void*>> bindings(n);
  for (int r = 0; r < n; ++r) {
    PlanGeometry g = geo;
    g.rank = r;
    plans.push_back(BuildCollectivePlan(desc, g, forced));
    scratch[r].resize(plans[r].scratchElems * esize + 1);
    SimRankBuffers& b = (*buffers)[r];
    char* recv = b.recv.data();
    char* send = b.send.data();
    if (inPlace) {
      // The in-place offsets of NCCL: allgather sends from the rank's block of the output,
      // reduce-scatter receives into the rank's block of the input.
      if (desc.kind == CollKind::AllGather) send = recv + r * desc.count * esize;
      else if (desc.kind == CollKind::ReduceScatter) recv = send + r * desc.count * esize;
      else send = recv;
    }
    bindings[r] = {send, recv, scratch[r].data()};
  }
  if (algorithm) *algorithm = plans[0].algorithm;
  return SimulatePlans(plans, bindings, geo);
}

}  // namespace strata
