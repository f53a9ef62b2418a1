#include "quant_plan_simulator.h"

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "exec/host_reduce.h"
#include "exec/quant/quant_plan_run.h"

namespace strata {
namespace {

class MemFifo {
 public:
  MemFifo(int nslots, size_t slotBytes) : slots_(static_cast<size_t>(nslots) * slotBytes), sizes_(nslots),
                                          nslots_(nslots), slotBytes_(slotBytes) {}
  size_t slotBytes() const { return slotBytes_; }
  void* acquire() { return head_ - tail_ < static_cast<uint64_t>(nslots_) ? slot(head_) : nullptr; }
  void post(size_t bytes) { sizes_[head_++ % nslots_] = bytes; }
  const void* peek(size_t* bytes) {
    if (tail_ >= head_) return nullptr;
    *bytes = sizes_[tail_ % nslots_];
    return slot(tail_);
  }
  void release() { ++tail_; }

 private:
  char* slot(uint64_t seq) { return slots_.data() + (seq % nslots_) * slotBytes_; }
  std::vector<char> slots_;
  std::vector<size_t> sizes_;
  uint64_t head_ = 0, tail_ = 0;
  int nslots_;
  size_t slotBytes_;
};

class MemSend : public SendConnection {
 public:
  MemSend(int peer, MemFifo* f) : SendConnection(peer), f_(f) {}
  size_t slotBytes() const override { return f_->slotBytes(); }
  void* tryAcquire() override { return f_->acquire(); }
  void post(size_t bytes) override { f_->post(bytes); }

 private:
  MemFifo* f_;
};

class MemRecv : public RecvConnection {
 public:
  MemRecv(int peer, MemFifo* f) : RecvConnection(peer), f_(f) {}
  const void* tryPeek(size_t* bytes) override { return f_->peek(bytes); }
  void release() override { f_->release(); }

 private:
  MemFifo* f_;
};

struct Link {
  std::unique_ptr<MemFifo> fifo;
  std::unique_ptr<MemSend> send;
  std::unique_ptr<MemRecv> recv;
};

class QuantSimNetwork {
 public:
  explicit QuantSimNetwork(const PlanGeometry& geo) : geo_(geo) {}
  Link* link(int from, int to, int channel) {
    if (from == to || from < 0 || to < 0 || from >= geo_.nranks || to >= geo_.nranks || channel < 0 ||
        channel >= std::max(1, geo_.nchannels))
      return nullptr;
    Link& l = links_[std::make_tuple(from, to, channel)];
    if (!l.fifo) {
      l.fifo = std::make_unique<MemFifo>(geo_.nslots, geo_.slotBytes);
      l.send = std::make_unique<MemSend>(to, l.fifo.get());
      l.recv = std::make_unique<MemRecv>(from, l.fifo.get());
    }
    return &l;
  }

 private:
  PlanGeometry geo_;
  std::map<std::tuple<int, int, int>, Link> links_;
};

class RankView : public ConnectionTable {
 public:
  RankView(QuantSimNetwork* net, int rank) : net_(net), rank_(rank) {}
  SendConnection* sendTo(int channel, int peer) override {
    Link* l = net_->link(rank_, peer, channel);
    return l ? l->send.get() : nullptr;
  }
  RecvConnection* recvFrom(int channel, int peer) override {
    Link* l = net_->link(peer, rank_, channel);
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
  for (;;) {
    bool any = false, all = true;
    for (int r = 0; r < n; ++r) {
      if (runs[r]->done()) continue;
      bool progressed = false;
      Status st = runs[r]->advance(&progressed);
      if (!st.ok()) return MakeError(st.code(), "rank %d: %s", r, st.message().c_str());
      any = any || progressed;
      all = all && runs[r]->done();
    }
    if (all) return Status::Ok();
    if (!any) {
      std::string blocked;
      for (int r = 0; r < n && blocked.size() < 2000; ++r)
        if (!runs[r]->done()) blocked += " rank " + std::to_string(r) + " waits for " + runs[r]->blockedOn() + ";";
      return MakeError(strataInternalError, "deadlock:%s", blocked.c_str());
    }
  }
}

}  // namespace strata
