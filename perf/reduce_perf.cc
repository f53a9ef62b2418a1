// reduce_perf: strataReduce, nccl-tests style. Only the root's output is defined, so only it is checked.
#include "common/collective_bench.h"

namespace strata::perf {
namespace {

class ReduceBench final : public CollectiveBench {
 public:
  const char* name() const override { return "Reduce"; }
  bool reduces() const override { return true; }
  bool rooted() const override { return true; }
  BufferShape shape(size_t elements, int /*nranks*/) const override {
    BufferShape s;
    s.count = s.sendCount = s.recvCount = elements;
    return s;
  }
  double busBwFactor(int /*n*/) const override { return 1.0; }
  void run(const CallArgs& a) const override {
    PERF_STRATA_CHECK(a.comm, strataReduce(a.send, a.recv, a.count, a.type, a.op, a.root, a.comm, nullptr));
  }
  ElementSource expected(const OutputPlace& p, size_t i) const override {
    return p.rank == p.root ? ElementSource::Reduce(i) : ElementSource::Skip();
  }
};

}  // namespace
}  // namespace strata::perf

int main(int argc, char** argv) { return strata::perf::RunCollectiveBench(argc, argv, strata::perf::ReduceBench()); }
