// Bandwidth of the host quantization kernels on each ISA the CPU has, against one core's memcpy, at 64 MiB of
// fp32 input (and 1 MiB, in cache). GB/s counts the input bytes read:
//   fused/...    fp32 local + an encoded incoming range -> encoded outgoing range (dequantize, accumulate in
//                fp32, quantize: the reduce-scatter step), input = 4 B/element + the encoded range
//   quantize/... fp32 -> encoded, input = 4 B/element
//   memcpy/...   std::memcpy of the fp32 buffer, input = 4 B/element
// After timing, each run checks its output against the scalar build's bytes (round to nearest: bit-identical).
//
//   quant_bw_perf [--benchmark_filter=fused/avx2]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "exec/host_reduce.h"
#include "exec/quant/host_quant.h"

namespace strata {
namespace {

using math::QuantFormat;
using math::QuantIoType;
using math::QuantParams;

std::vector<float> Gaussian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = g(rng);
  return v;
}

void SetRates(benchmark::State& state, double input_bytes) {
  const double total = static_cast<double>(state.iterations()) * input_bytes;
  state.SetBytesProcessed(static_cast<int64_t>(total));
  state.counters["GB/s"] = benchmark::Counter(total / 1e9, benchmark::Counter::kIsRate);
}

void BenchQuant(benchmark::State& state, SimdIsa isa, QuantParams p, size_t bytes, bool fused) {
  if (!ForceHostReduceIsa(isa)) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const size_t n = bytes / 4;
  const size_t enc = math::QuantEncodedBytes(p, n);
  std::vector<float> local = Gaussian(n, 1), other = Gaussian(n, 2);
  std::vector<uint8_t> in(enc), out(enc, 0), expect(enc, 0);
  HostQuantize(p, other.data(), QuantIoType::kFloat32, n, 0, in.data());
  math::QuantStep s{};
  s.count = n;
  s.local = local.data();
  s.local_type = QuantIoType::kFloat32;
  if (fused) s.in[0] = in.data();
  s.out = out.data();
  for ([[maybe_unused]] auto _ : state) {
    HostQuantStep(p, s);
    benchmark::ClobberMemory();
  }
  SetRates(state, static_cast<double>(bytes) + (fused ? static_cast<double>(enc) : 0.0));
  ForceHostReduceIsa(SimdIsa::Scalar);
  s.out = expect.data();
  HostQuantStep(p, s);
  if (out != expect) state.SkipWithError("output differs from the scalar build's bytes");
}

void BenchMemcpy(benchmark::State& state, size_t bytes) {
  std::vector<float> src = Gaussian(bytes / 4, 3), dst(bytes / 4, 0.0f);
  for ([[maybe_unused]] auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  SetRates(state, static_cast<double>(bytes));
  if (dst != src) state.SkipWithError("copy differs from source");
}

void RegisterAll() {
  const struct {
    const char* name;
    QuantParams p;
  } specs[] = {
      {"int8:128", {QuantFormat::kInt8, math::QuantScale::kFp32, math::QuantRounding::kNearest, 128, 0}},
      {"int8:32", {QuantFormat::kInt8, math::QuantScale::kFp32, math::QuantRounding::kNearest, 32, 0}},
      {"int4:32", {QuantFormat::kInt4, math::QuantScale::kFp32, math::QuantRounding::kNearest, 32, 0}},
      {"fp8e4m3:128", {QuantFormat::kFp8E4M3, math::QuantScale::kFp32, math::QuantRounding::kNearest, 128, 0}},
      {"bf16", {QuantFormat::kBf16, math::QuantScale::kFp32, math::QuantRounding::kNearest, 128, 0}},
  };
  const struct {
    const char* name;
    size_t bytes;
  } sizes[] = {{"1MiB", size_t{1} << 20}, {"64MiB", size_t{64} << 20}};
  const SimdIsa best = HostReduceIsa();
  for (const auto& sz : sizes) {
    benchmark::RegisterBenchmark((std::string("memcpy/") + sz.name).c_str(), BenchMemcpy, sz.bytes);
    for (SimdIsa isa : {SimdIsa::Scalar, SimdIsa::Avx2, SimdIsa::Avx512}) {
      if (!ForceHostReduceIsa(isa)) continue;
      for (const auto& s : specs) {
        for (bool fused : {true, false}) {
          const std::string name = std::string(fused ? "fused/" : "quantize/") + SimdIsaName(isa) + "/" + s.name +
                                   "/" + sz.name;
          benchmark::RegisterBenchmark(name.c_str(), BenchQuant, isa, s.p, sz.bytes, fused);
        }
      }
    }
  }
  ForceHostReduceIsa(best);
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  strata::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
