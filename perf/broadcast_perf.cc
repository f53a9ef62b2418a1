// broadcast_perf: strataBroadcast, nccl-tests style. Every rank ends with the root's input.
#include "common/collective_bench.h"

namespace strata::perf {
namespace {

class BroadcastBench final : public CollectiveBench {
 public:
  const char* name() const override { return "Broadcast"; }
  bool rooted() const override { return true; }
  BufferShape shape(size_t elements, int /*nranks*/) const override {
    BufferShape s;
    s.count = s.sendCount = s.recvCount = elements;
    return s;
  }
  double busBwFactor(int /*n*/) const override { return 1.0; }
  bool hasInput(int rank, int root) const override { return rank == root; }
  void run(const CallArgs& a) const override {
    PERF_STRATA_CHECK(a.comm, strataBroadcast(a.send, a.recv, a.count, a.type, a.root, a.comm, nullptr));
  }
  ElementSource expected(const OutputPlace& p, size_t i) const override { return ElementSource::Copy(p.root, i); }
};

}  // namespace
}  // namespace strata::perf

int main(int argc, char** argv) { return strata::perf::RunCollectiveBench(argc, argv, strata::perf::BroadcastBench()); }
