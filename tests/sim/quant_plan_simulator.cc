#include "quant_plan_simulator.h"

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "exec/host_reduce.h"
#include "exec/quant/quant_plan_run.h"
#include "sim/sim_fifo.h"

namespace strata {
namespace {

class QuantSimNetwork {
 public:
  explicit QuantSimNetwork(const PlanGeometry& geo) : geo_(geo), clock_(0x5eed0000u + geo.nranks) {}
  SimClock& clock() { return clock_; }
  SimLink* link(int from, int to, int channel) {
    if (from == to || from < 0 || to < 0 || from >= geo_.nranks || to >= geo_.nranks || channel < 0 ||
        channel >= std::max(1, geo_.nchannels))
      return nullptr;
    SimLink& l = links_[std::make_tuple(from, to, channel)];
    if (!l.fifo) l.make(&clock_, from, to, geo_.nslots, geo_.slotBytes);
    return &l;
  }

 private:
  PlanGeometry geo_;
  SimClock clock_;
  std::map<std::tuple<int, int, int>, SimLink> links_;
};

class RankView : public ConnectionTable {
 public:
  RankView(QuantSimNetwork* net, int rank) : net_(net), rank_(rank) {}
  SendConnection* sendTo(int channel, int peer) override {
    SimLink* l = net_->link(rank_, peer, channel);
    return l ? l->send.get() : nullptr;
  }
  RecvConnection* recvFrom(int channel, int peer) override {
    SimLink* l = net_->link(peer, rank_, channel);
    return l ? l->recv.get() : nullptr;
  }

 private:
  QuantSimNetwork* net_;
  int rank_;
};

}  // namespace

Status SimulateQuantCollective(QuantAlgo algo, const CollDesc& desc, const PlanGeometry& geo,
                               const math::QuantParams& p, std::vector<QuantSimRank>* ranks, uint64_t call,
                               bool inPlace, std::string* algorithm) {
  const int n = geo.nranks;
  const size_t esize = DataTypeSize(desc.dtype);
  QuantSimNetwork net(geo);
  std::vector<QuantPlan> plans(n);
  std::vector<std::unique_ptr<RankView>> views;
  std::vector<std::vector<float>> acc(n);
  std::vector<std::vector<uint8_t>> enc(n);
  std::vector<std::vector<void*>> bindings(n);
  std::vector<std::unique_ptr<QuantPlanRun>> runs;
  for (int r = 0; r < n; ++r) {
    PlanGeometry g = geo;
    g.rank = r;
    plans[r] = BuildQuantPlan(algo, desc, g, p);
    acc[r].resize(plans[r].accElems + 1);
    enc[r].resize(plans[r].encBytes + 1);
    QuantSimRank& b = (*ranks)[r];
    char* recv = b.recv.data();
    char* send = b.send.data();
    if (inPlace) {
      if (desc.kind == CollKind::AllGather) send = recv + r * desc.count * esize;
      else if (desc.kind == CollKind::ReduceScatter) recv = send + r * desc.count * esize;
      else send = recv;
    }
    bindings[r] = {send, recv, acc[r].data(), enc[r].data()};
    views.push_back(std::make_unique<RankView>(&net, r));
  }
  if (algorithm) *algorithm = plans[0].algorithm;
  for (int r = 0; r < n; ++r) {
    runs.push_back(std::make_unique<QuantPlanRun>(plans[r], views[r].get()));
    STRATA_CHECK(runs[r]->init());
    runs[r]->start(bindings[r].data(), call);
  }
  return DriveRuns(runs, net.clock());
}

}  // namespace strata
