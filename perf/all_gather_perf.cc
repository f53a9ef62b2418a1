// all_gather_perf: strataAllGather, nccl-tests style. Size is the gathered output; count is per rank.
#include "common/collective_bench.h"

namespace strata::perf {
namespace {

class AllGatherBench final : public CollectiveBench {
 public:
  const char* name() const override { return "AllGather"; }
  size_t sizeDivisor(int nranks) const override { return static_cast<size_t>(nranks); }
  BufferShape shape(size_t elements, int nranks) const override {
    BufferShape s;
    s.count = s.sendCount = elements / static_cast<size_t>(nranks);
    s.recvCount = elements;
    s.sendInPlaceOffset = s.count;  // in-place: each rank's input already sits in its slot of the output
    return s;
  }
  double busBwFactor(int n) const override { return static_cast<double>(n - 1) / n; }
  bool quantizable() const override { return true; }
  void run(const CallArgs& a) const override {
    if (a.quant) {
      PERF_STRATA_CHECK(a.comm, strataAllGatherEx(a.send, a.recv, a.count, a.type, a.comm, nullptr, a.quant));
      return;
    }
    PERF_STRATA_CHECK(a.comm, strataAllGather(a.send, a.recv, a.count, a.type, a.comm, nullptr));
  }
  ElementSource expected(const OutputPlace& p, size_t i) const override {
    return ElementSource::Copy(static_cast<int>(i / p.count), i % p.count);
  }
};

}  // namespace
}  // namespace strata::perf

int main(int argc, char** argv) { return strata::perf::RunCollectiveBench(argc, argv, strata::perf::AllGatherBench()); }
