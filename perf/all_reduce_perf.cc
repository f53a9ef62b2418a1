// all_reduce_perf: strataAllReduce, nccl-tests style. Every rank ends with the reduction of all inputs.
#include "common/collective_bench.h"

namespace strata::perf {
namespace {

class AllReduceBench final : public CollectiveBench {
 public:
  const char* name() const override { return "AllReduce"; }
  bool reduces() const override { return true; }
  BufferShape shape(size_t elements, int /*nranks*/) const override {
    BufferShape s;
    s.count = s.sendCount = s.recvCount = elements;
    return s;  // in-place: recvbuff == sendbuff
  }
  // A ring moves 2(n-1)/n of the buffer over each link.
  double busBwFactor(int n) const override { return 2.0 * (n - 1) / n; }
  bool quantizable() const override { return true; }
  void run(const CallArgs& a) const override {
    if (a.quant) {
      PERF_STRATA_CHECK(a.comm, strataAllReduceEx(a.send, a.recv, a.count, a.type, a.op, a.comm, nullptr, a.quant));
      return;
    }
    PERF_STRATA_CHECK(a.comm, strataAllReduce(a.send, a.recv, a.count, a.type, a.op, a.comm, nullptr));
  }
  ElementSource expected(const OutputPlace& /*place*/, size_t i) const override { return ElementSource::Reduce(i); }
};

}  // namespace
}  // namespace strata::perf

int main(int argc, char** argv) { return strata::perf::RunCollectiveBench(argc, argv, strata::perf::AllReduceBench()); }
