// Runtime dispatch of the host quantization steps: the ISA the host reductions use (HostReduceIsa), so one
// choice, and one test override, covers every host kernel.
#include "exec/quant/host_quant.h"

#include <cstdio>
#include <cstdlib>

#include "exec/host_reduce.h"
#include "exec/quant/host_quant_impl.h"

namespace strata {
namespace {

// Steps come from plans, which are built from validated specs; a step with nothing to sum is a bug.
[[noreturn]] void InvalidStep(const char* what) {
  std::fprintf(stderr, "strata: quantization step called with %s\n", what);
  std::abort();
}

}  // namespace

void HostQuantStep(const math::QuantParams& p, const math::QuantStep& step) {
  if (step.count == 0) return;
  if (step.acc_in == nullptr && step.local == nullptr && step.in[0] == nullptr && step.in[1] == nullptr) {
    InvalidStep("no source");
  }
  if (p.block < math::kQuantMinBlock || p.block > math::kQuantMaxBlock || p.block % math::kQuantBlockMultiple != 0) {
    InvalidStep("a bad block size");
  }
  switch (HostReduceIsa()) {
    case SimdIsa::Avx512:
      quant_avx512::RunStep(p, step);
      return;
    case SimdIsa::Avx2:
      quant_avx2::RunStep(p, step);
      return;
    case SimdIsa::Scalar:
      break;
  }
  quant_scalar::RunStep(p, step);
}

void HostQuantize(const math::QuantParams& p, const void* src, math::QuantIoType type, size_t count,
                  uint64_t index_base, uint8_t* out) {
  math::QuantStep s{};
  s.count = count;
  s.index_base = index_base;
  s.local = src;
  s.local_type = type;
  s.out = out;
  HostQuantStep(p, s);
}

void HostDequantize(const math::QuantParams& p, const uint8_t* in, size_t count, void* dst, math::QuantIoType type) {
  math::QuantStep s{};
  s.count = count;
  s.in[0] = in;
  s.deq_out = dst;
  s.deq_type = type;
  HostQuantStep(p, s);
}

}  // namespace strata
