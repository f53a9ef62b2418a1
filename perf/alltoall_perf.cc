// alltoall_perf: strataAlltoAll, nccl-tests style. Size is each rank's whole buffer; count is per peer.
// strata defines no in-place all-to-all, so the in-place columns time the out-of-place call again.
#include "common/collective_bench.h"

namespace strata::perf {
namespace {

class AlltoAllBench final : public CollectiveBench {
 public:
  const char* name() const override { return "AlltoAll"; }
  bool hasInPlace() const override { return false; }
  size_t sizeDivisor(int nranks) const override { return static_cast<size_t>(nranks); }
  BufferShape shape(size_t elements, int nranks) const override {
    BufferShape s;
    s.count = elements / static_cast<size_t>(nranks);
    s.sendCount = s.recvCount = elements;
    return s;
  }
  double busBwFactor(int n) const override { return static_cast<double>(n - 1) / n; }
  void run(const CallArgs& a) const override {
    PERF_STRATA_CHECK(a.comm, strataAlltoAll(a.send, a.recv, a.count, a.type, a.comm, nullptr));
  }
  // Block p of my output is block `rank` of p's input.
  ElementSource expected(const OutputPlace& p, size_t i) const override {
    return ElementSource::Copy(static_cast<int>(i / p.count), static_cast<size_t>(p.rank) * p.count + i % p.count);
  }
};

}  // namespace
}  // namespace strata::perf

int main(int argc, char** argv) { return strata::perf::RunCollectiveBench(argc, argv, strata::perf::AlltoAllBench()); }
