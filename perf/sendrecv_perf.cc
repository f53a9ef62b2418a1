// sendrecv_perf: each rank sends to rank+1 and receives from rank-1 in one group, nccl-tests style.
// Size is what each rank sends. strata defines no in-place send/recv, so the in-place columns time the
// out-of-place exchange again.
#include "common/collective_bench.h"

namespace strata::perf {
namespace {

class SendRecvBench final : public CollectiveBench {
 public:
  const char* name() const override { return "SendRecv"; }
  bool hasInPlace() const override { return false; }
  BufferShape shape(size_t elements, int /*nranks*/) const override { return SameCountShape(elements); }
  double busBwFactor(int /*n*/) const override { return 1.0; }
  void run(const CallArgs& a) const override {
    const int next = (a.rank + 1) % a.nranks;
    const int prev = (a.rank - 1 + a.nranks) % a.nranks;
    PERF_STRATA_CHECK(a.comm, strataGroupStart());
    PERF_STRATA_CHECK(a.comm, strataSend(a.send, a.count, a.type, next, a.comm, nullptr));
    PERF_STRATA_CHECK(a.comm, strataRecv(a.recv, a.count, a.type, prev, a.comm, nullptr));
    PERF_STRATA_CHECK(a.comm, strataGroupEnd());
  }
  ElementSource expected(const OutputPlace& p, size_t i) const override {
    return ElementSource::Copy((p.rank - 1 + p.nranks) % p.nranks, i);
  }
};

}  // namespace
}  // namespace strata::perf

int main(int argc, char** argv) { return strata::perf::RunCollectiveBench(argc, argv, strata::perf::SendRecvBench()); }
