// reduce_scatter_perf: strataReduceScatter, nccl-tests style. Size is the whole input; count is per rank.
#include "common/collective_bench.h"

namespace strata::perf {
namespace {

class ReduceScatterBench final : public CollectiveBench {
 public:
  const char* name() const override { return "ReduceScatter"; }
  bool reduces() const override { return true; }
  size_t sizeDivisor(int nranks) const override { return static_cast<size_t>(nranks); }
  BufferShape shape(size_t elements, int nranks) const override {
    BufferShape s;
    s.count = s.recvCount = elements / static_cast<size_t>(nranks);
    s.sendCount = elements;
    s.recvInPlaceOffset = s.count;  // in-place: each rank's block of the input receives its result
    return s;
  }
  double busBwFactor(int n) const override { return static_cast<double>(n - 1) / n; }
  bool quantizable() const override { return true; }
  void run(const CallArgs& a) const override {
    if (a.quant) {
      PERF_STRATA_CHECK(a.comm,
                        strataReduceScatterEx(a.send, a.recv, a.count, a.type, a.op, a.comm, nullptr, a.quant));
      return;
    }
    PERF_STRATA_CHECK(a.comm, strataReduceScatter(a.send, a.recv, a.count, a.type, a.op, a.comm, nullptr));
  }
  ElementSource expected(const OutputPlace& p, size_t i) const override {
    return ElementSource::Reduce(static_cast<size_t>(p.rank) * p.count + i);
  }
};

}  // namespace
}  // namespace strata::perf

int main(int argc, char** argv) {
  return strata::perf::RunCollectiveBench(argc, argv, strata::perf::ReduceScatterBench());
}
