// Bandwidth of the host reductions (HostReduce sum for fp32, bf16, fp16, int32) on each ISA the CPU has, and of
// HostCopy, for 64 KiB (L2), 1 MiB (L3) and 64 MiB (memory) buffers. bytes_per_second and GB/s count the input
// bytes read: two buffers for a reduction, one for a copy. Every run checks its output after timing.
//
//   reduce_bw_perf [--benchmark_filter=avx2/fp32]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "exec/host_reduce.h"
#include "strata/reduce_math.h"

namespace strata {
namespace {

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t, AlignedFree>;

Buffer Allocate(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p == nullptr) std::abort();
  std::memset(p, 0, bytes);  // fault the pages in before timing
  return Buffer(static_cast<uint8_t*>(p));
}

// Small integers in every type, so each sum is exact and the check needs no rounding model.
void Fill(uint8_t* p, size_t count, strataDataType_t type, uint32_t seed) {
  std::mt19937 rng(seed);
  for (size_t i = 0; i < count; ++i) {
    const int v = static_cast<int>(rng() % 128);
    switch (type) {
      case strataFloat32: {
        const float f = static_cast<float>(v);
        std::memcpy(p + 4 * i, &f, 4);
        break;
      }
      case strataInt32: {
        const int32_t x = v - 64;
        std::memcpy(p + 4 * i, &x, 4);
        break;
      }
      case strataFloat16: {
        const uint16_t h = math::FloatToHalf(static_cast<float>(v));
        std::memcpy(p + 2 * i, &h, 2);
        break;
      }
      default: {  // bf16
        const uint16_t h = math::FloatToBFloat16(static_cast<float>(v));
        std::memcpy(p + 2 * i, &h, 2);
        break;
      }
    }
  }
}

float ElementAsFloat(const uint8_t* p, size_t i, strataDataType_t type) {
  switch (type) {
    case strataFloat32: {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      return f;
    }
    case strataInt32: {
      int32_t x;
      std::memcpy(&x, p + 4 * i, 4);
      return static_cast<float>(x);
    }
    case strataFloat16: {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      return math::HalfToFloat(h);
    }
    default: {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      return math::BFloat16ToFloat(h);
    }
  }
}

void SetRates(benchmark::State& state, size_t input_bytes) {
  const double total = static_cast<double>(state.iterations()) * static_cast<double>(input_bytes);
  state.SetBytesProcessed(static_cast<int64_t>(total));
  state.counters["GB/s"] = benchmark::Counter(total / 1e9, benchmark::Counter::kIsRate);
}

void BenchReduce(benchmark::State& state, SimdIsa isa, strataDataType_t type, size_t bytes) {
  if (!ForceHostReduceIsa(isa)) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const size_t count = bytes / DataTypeSize(type);
  Buffer a = Allocate(bytes), b = Allocate(bytes), dst = Allocate(bytes);
  Fill(a.get(), count, type, 1);
  Fill(b.get(), count, type, 2);
  for ([[maybe_unused]] auto _ : state) {
    HostReduce(dst.get(), a.get(), b.get(), count, type, strataSum, 1);
    benchmark::ClobberMemory();
  }
  SetRates(state, 2 * bytes);
  for (size_t i = 0; i < count; ++i) {
    if (ElementAsFloat(dst.get(), i, type) != ElementAsFloat(a.get(), i, type) + ElementAsFloat(b.get(), i, type)) {
      state.SkipWithError(("wrong sum at element " + std::to_string(i)).c_str());
      return;
    }
  }
}

void BenchCopy(benchmark::State& state, size_t bytes) {
  Buffer src = Allocate(bytes), dst = Allocate(bytes);
  Fill(src.get(), bytes / 4, strataInt32, 3);
  for ([[maybe_unused]] auto _ : state) {
    HostCopy(dst.get(), src.get(), bytes);
    benchmark::ClobberMemory();
  }
  SetRates(state, bytes);
  if (std::memcmp(dst.get(), src.get(), bytes) != 0) state.SkipWithError("copy differs from source");
}

struct Size {
  const char* name;
  size_t bytes;
};
const Size kSizes[] = {{"64KiB", size_t{64} << 10}, {"1MiB", size_t{1} << 20}, {"64MiB", size_t{64} << 20}};

void RegisterAll() {
  const struct {
    const char* name;
    strataDataType_t type;
  } types[] = {{"fp32", strataFloat32}, {"bf16", strataBfloat16}, {"fp16", strataFloat16}, {"int32", strataInt32}};
  const SimdIsa best = HostReduceIsa();
  for (SimdIsa isa : {SimdIsa::Scalar, SimdIsa::Avx2, SimdIsa::Avx512}) {
    if (!ForceHostReduceIsa(isa)) continue;
    for (const auto& t : types) {
      for (const Size& s : kSizes) {
        const std::string name = std::string("HostReduce/") + SimdIsaName(isa) + "/" + t.name + "_sum/" + s.name;
        benchmark::RegisterBenchmark(name.c_str(), BenchReduce, isa, t.type, s.bytes);
      }
    }
  }
  ForceHostReduceIsa(best);
  // HostCopy does not depend on the ISA.
  for (const Size& s : kSizes) {
    benchmark::RegisterBenchmark((std::string("HostCopy/") + s.name).c_str(), BenchCopy, s.bytes);
  }
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
