// Bandwidth of the CUDA quantization kernels against a device-to-device cudaMemcpy on the same GPU, counting
// bytes read plus bytes written for both (the copy moves 2 x its size). Rows:
//   quantize  fp32 -> encoded                       (the owner's quantize-once, a sender's first slot)
//   fused     fp32 local + encoded in -> encoded out  (dequantize, accumulate in fp32, quantize: one pass)
//   dequant   encoded -> fp32                        (arrival of an allgather piece)
// Each time is the median of 30 runs after 5 warm-ups, timed with CUDA events, inputs random (never zeros).
// Usage: quant_cuda_bench [elements]   (default 64Mi fp32 elements, 256 MiB)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "quant/quant_kernels.h"

namespace {

using strata::math::QuantFormat;
using strata::math::QuantIoType;
using strata::math::QuantParams;

#define CHECK_CUDA(expr)                                                                            \
  do {                                                                                             \
    const int e_ = static_cast<int>(expr);                                                         \
    if (e_ != 0) {                                                                                 \
      std::fprintf(stderr, "%s failed: %s\n", #expr, cudaGetErrorString(static_cast<cudaError_t>(e_))); \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

template <typename F>
double MedianMs(F&& f) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i) f();
  std::vector<float> ms;
  for (int i = 0; i < 30; ++i) {
    CHECK_CUDA(cudaEventRecord(a));
    f();
    CHECK_CUDA(cudaEventRecord(b));
    CHECK_CUDA(cudaEventSynchronize(b));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (size_t{64} << 20);
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
    std::printf("quant_cuda_bench: no GPU here; nothing measured\n");
    return 0;
  }
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::vector<float> host(n);
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (float& v : host) v = g(rng);
  float *src = nullptr, *dst = nullptr, *out32 = nullptr;
  CHECK_CUDA(cudaMalloc(&src, n * 4));
  CHECK_CUDA(cudaMalloc(&dst, n * 4));
  CHECK_CUDA(cudaMalloc(&out32, n * 4));
  CHECK_CUDA(cudaMemcpy(src, host.data(), n * 4, cudaMemcpyHostToDevice));
  const double copyMs = MedianMs([&] { CHECK_CUDA(cudaMemcpyAsync(dst, src, n * 4, cudaMemcpyDeviceToDevice)); });
  const double copyGBs = 2.0 * n * 4 / (copyMs * 1e6);
  std::printf("device: %s, %d SMs; %zu fp32 elements (%.0f MiB)\n", prop.name, prop.multiProcessorCount, n,
              n * 4.0 / (1 << 20));
  std::printf("%-10s %-12s %10s %10s %9s\n", "kernel", "spec", "time_ms", "GB/s", "of_copy");
  std::printf("%-10s %-12s %10.3f %10.1f %8.1f%%\n", "memcpy", "d2d", copyMs, copyGBs, 100.0);
  struct Spec {
    const char* name;
    QuantParams p;
  };
  const Spec specs[] = {
      {"int8:128",
       {QuantFormat::kInt8, strata::math::QuantScale::kFp32, strata::math::QuantRounding::kNearest, 128, 0}},
      {"int8:32", {QuantFormat::kInt8, strata::math::QuantScale::kFp32, strata::math::QuantRounding::kNearest, 32, 0}},
      {"int4:32", {QuantFormat::kInt4, strata::math::QuantScale::kFp32, strata::math::QuantRounding::kNearest, 32, 0}},
      {"fp8e4m3:128",
       {QuantFormat::kFp8E4M3, strata::math::QuantScale::kFp32, strata::math::QuantRounding::kNearest, 128, 0}},
      {"bf16", {QuantFormat::kBf16, strata::math::QuantScale::kFp32, strata::math::QuantRounding::kNearest, 128, 0}},
      {"int8:4096",
       {QuantFormat::kInt8, strata::math::QuantScale::kFp32, strata::math::QuantRounding::kNearest, 4096, 0}},
      {"int8:128:sr",
       {QuantFormat::kInt8, strata::math::QuantScale::kFp32, strata::math::QuantRounding::kStochastic, 128, 7}},
  };
  for (const Spec& s : specs) {
    const size_t enc = strata::math::QuantEncodedBytes(s.p, n);
    uint8_t *in = nullptr, *out = nullptr;
    CHECK_CUDA(cudaMalloc(&in, enc));
    CHECK_CUDA(cudaMalloc(&out, enc));
    CHECK_CUDA(strata::cuda::QuantizeAsync(s.p, dst, QuantIoType::kFloat32, n, 0, in, nullptr));
    const double qMs =
        MedianMs([&] { CHECK_CUDA(strata::cuda::QuantizeAsync(s.p, src, QuantIoType::kFloat32, n, 0, out, nullptr)); });
    strata::math::QuantStep st{};
    st.count = n;
    st.local = src;
    st.local_type = QuantIoType::kFloat32;
    st.in[0] = in;
    st.out = out;
    const double fMs = MedianMs([&] { CHECK_CUDA(strata::cuda::QuantStepAsync(s.p, st, nullptr)); });
    const double dMs = MedianMs(
        [&] { CHECK_CUDA(strata::cuda::DequantizeAsync(s.p, in, n, out32, QuantIoType::kFloat32, nullptr)); });
    const double qGBs = (n * 4.0 + enc) / (qMs * 1e6);
    const double fGBs = (n * 4.0 + 2.0 * enc) / (fMs * 1e6);
    const double dGBs = (n * 4.0 + enc) / (dMs * 1e6);
    std::printf("%-10s %-12s %10.3f %10.1f %8.1f%%\n", "quantize", s.name, qMs, qGBs, 100.0 * qGBs / copyGBs);
    std::printf("%-10s %-12s %10.3f %10.1f %8.1f%%\n", "fused", s.name, fMs, fGBs, 100.0 * fGBs / copyGBs);
    std::printf("%-10s %-12s %10.3f %10.1f %8.1f%%\n", "dequant", s.name, dMs, dGBs, 100.0 * dGBs / copyGBs);
    cudaFree(in);
    cudaFree(out);
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  cudaFree(src);
  cudaFree(dst);
  cudaFree(out32);
  return 0;
}
