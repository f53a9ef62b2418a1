// Blocks of 1024 elements or fewer run QuantStepRegKernel (below); larger ones one warp per block: the lanes build the block's fp32 sum in shared memory (coalesced loads
// of every source), take the absmax of the float bits with one warp reduction, derive the scale, then write
// the codes two elements per lane (an int4 byte whole), the accumulator and the dequantized result. The
// per-element operations are those of strata/quant_math.h in the host kernels' order, so --fmad=false builds
// reproduce the host bytes.
#include <cuda_runtime.h>

#include "quant/quant_kernels.h"

namespace strata {
namespace cuda {
namespace {

using math::QuantIoType;
using math::QuantParams;
using math::QuantStep;


// Typed device loads and stores. The shared math reads through memcpy, which nvcc lowers to byte accesses
// when it cannot prove alignment; I/O buffers, accumulators and code regions are naturally aligned (values
// start 16 bytes into a range, int8 pairs start on even elements), so these read and write whole words and
// leave the values to the same conversion functions.
__device__ __forceinline__ float DevLoadIo(const void* p, size_t i, QuantIoType t) {
  switch (t) {
    case QuantIoType::kFloat16: return math::HalfToFloat(static_cast<const uint16_t*>(p)[i]);
    case QuantIoType::kBFloat16: return math::BFloat16ToFloat(static_cast<const uint16_t*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

__device__ __forceinline__ void DevStoreIo(void* p, size_t i, QuantIoType t, float v) {
  switch (t) {
    case QuantIoType::kFloat16: static_cast<uint16_t*>(p)[i] = math::FloatToHalf(v); break;
    case QuantIoType::kBFloat16: static_cast<uint16_t*>(p)[i] = math::FloatToBFloat16(v); break;
    default: static_cast<float*>(p)[i] = v; break;
  }
}

__device__ __forceinline__ uint32_t DevLoadCode(const uint8_t* values, size_t i, math::QuantFormat f) {
  switch (math::QuantValueBits(f)) {
    case 16: return reinterpret_cast<const uint16_t*>(values)[i];
    case 8: return values[i];
    default: return (values[i / 2] >> (4 * (i & 1))) & 0xfu;
  }
}

__device__ __forceinline__ float DevLoadScale(const uint8_t* scales, size_t block, math::QuantScale sf) {
  if (sf == math::QuantScale::kFp16) return math::HalfToFloat(reinterpret_cast<const uint16_t*>(scales)[block]);
  return reinterpret_cast<const float*>(scales)[block];
}

// Elements i and i + 1 (i even), written as one access.
__device__ __forceinline__ void DevStoreCodePair(uint8_t* values, size_t i, math::QuantFormat f, uint32_t c0,
                                                 uint32_t c1, bool has_second) {
  switch (math::QuantValueBits(f)) {
    case 16:
      if (has_second) {
        reinterpret_cast<uint32_t*>(values)[i / 2] = (c0 & 0xffffu) | (c1 << 16);
      } else {
        reinterpret_cast<uint16_t*>(values)[i] = static_cast<uint16_t>(c0);
      }
      break;
    case 8:
      if (has_second) {
        reinterpret_cast<uint16_t*>(values)[i / 2] = static_cast<uint16_t>((c0 & 0xffu) | ((c1 & 0xffu) << 8));
      } else {
        values[i] = static_cast<uint8_t>(c0);
      }
      break;
    default:
      values[i / 2] = static_cast<uint8_t>((c0 & 0xfu) | (has_second ? (c1 & 0xfu) << 4 : 0u));
      break;
  }
}

__device__ __forceinline__ void DevStoreScale(uint8_t* scales, size_t block, math::QuantScale sf, uint32_t stored) {
  if (sf == math::QuantScale::kFp16) reinterpret_cast<uint16_t*>(scales)[block] = static_cast<uint16_t>(stored);
  else reinterpret_cast<uint32_t*>(scales)[block] = stored;
}

// Warps per CTA: 8 KiB of sums per CTA at most (block 4096: 2 warps; block <= 1024: 8).
__host__ __device__ inline int WarpsPerCta(uint32_t block) {
  const uint32_t w = 8192u / block;
  return w < 1 ? 1 : (w > 8 ? 8 : static_cast<int>(w));
}

__global__ void QuantStepKernel(QuantParams p, QuantStep s, math::QuantLayout layout) {
  extern __shared__ float smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const size_t b = static_cast<size_t>(blockIdx.x) * WarpsPerCta(p.block) + warp;
  const bool scaled = math::QuantHasScale(p.format);
  if (b == 0 && s.out != nullptr && lane == 0) {
    const size_t scale_end = layout.blocks * math::QuantScaleBytes(p);
    for (size_t i = scale_end; i < layout.values_offset; ++i) s.out[i] = 0;
  }
  if (b >= layout.blocks) return;
  float* sum = smem + static_cast<size_t>(warp) * p.block;
  const size_t e0 = b * p.block;
  const size_t n = s.count - e0 < p.block ? s.count - e0 : p.block;
  const size_t code_offset = layout.values_offset + math::QuantValueBytes(p.format, e0);
  float in_scale[2] = {1.0f, 1.0f};
  for (int k = 0; k < 2; ++k)
    if (s.in[k] != nullptr && scaled) in_scale[k] = DevLoadScale(s.in[k], b, p.scale);
  uint32_t absmax = 0;
  for (size_t i = lane; i < n; i += 32) {
    const size_t e = e0 + i;
    float v = 0.0f;
    bool first = true;
    if (s.acc_in != nullptr) {
      v = s.acc_in[e];
      first = false;
    }
    if (s.local != nullptr) {
      const float x = DevLoadIo(s.local, e, s.local_type);
      v = first ? x : v + x;
      first = false;
    }
    for (int k = 0; k < 2; ++k) {
      if (s.in[k] == nullptr) continue;
      const float x = math::DequantizeValue(DevLoadCode(s.in[k] + code_offset, i, p.format), in_scale[k], p.format);
      v = first ? x : v + x;
      first = false;
    }
    if (s.divisor > 1) v = v / static_cast<float>(s.divisor);
    sum[i] = v;
    if (s.acc_out != nullptr) s.acc_out[e] = v;
    const uint32_t a = math::AbsBits(v);
    absmax = a > absmax ? a : absmax;
  }
  absmax = __reduce_max_sync(0xffffffffu, absmax);
  __syncwarp();
  if (s.out == nullptr) {
    if (s.deq_out != nullptr)
      for (size_t i = lane; i < n; i += 32) DevStoreIo(s.deq_out, e0 + i, s.deq_type, sum[i]);
    return;
  }
  math::BlockScale bs{1.0f, 1.0f, 0u, true};
  if (scaled) {
    bs = math::MakeBlockScale(absmax, p);
    if (lane == 0) DevStoreScale(s.out, b, p.scale, bs.stored);
  }
  uint8_t* values = s.out + code_offset;
  for (size_t i = 2 * lane; i < n; i += 64) {
    const bool two = i + 1 < n;
    const uint32_t c0 = math::QuantizeValue(sum[i], bs, p, s.index_base + e0 + i);
    const uint32_t c1 = two ? math::QuantizeValue(sum[i + 1], bs, p, s.index_base + e0 + i + 1) : 0u;
    DevStoreCodePair(values, i, p.format, c0, c1, two);
    if (s.deq_out != nullptr) {
      DevStoreIo(s.deq_out, e0 + i, s.deq_type, math::DequantizeValue(c0, bs.scale, p.format));
      if (two) DevStoreIo(s.deq_out, e0 + i + 1, s.deq_type, math::DequantizeValue(c1, bs.scale, p.format));
    }
  }
}


// Blocks of up to 1024 elements: a group of G lanes (G <= 32) per block, each lane holding E elements in
// registers (pairs j * G + lane, so a warp's loads and stores are contiguous), the absmax reduced over the
// group's lanes, and a grid-stride loop so each thread keeps several blocks' loads in flight.
template <int E>
__global__ void QuantStepRegKernel(QuantParams p, QuantStep s, math::QuantLayout layout, int G) {
  const int lane = threadIdx.x % 32;
  const int per_warp = 32 / G, grp = lane / G, gl = lane % G;
  if (blockIdx.x == 0 && threadIdx.x == 0 && s.out != nullptr) {
    const size_t scale_end = layout.blocks * math::QuantScaleBytes(p);
    for (size_t i = scale_end; i < layout.values_offset; ++i) s.out[i] = 0;
  }
  if (grp >= per_warp) return;
  const unsigned mask = G == 32 ? 0xffffffffu : ((1u << G) - 1u) << (grp * G);
  const bool scaled = math::QuantHasScale(p.format);
  const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const size_t warps = static_cast<size_t>(gridDim.x) * blockDim.x / 32;
  for (size_t b = warp * per_warp + grp; b < layout.blocks; b += warps * per_warp) {
    const size_t e0 = b * p.block;
    const size_t n = s.count - e0 < p.block ? s.count - e0 : p.block;
    const size_t code_offset = layout.values_offset + math::QuantValueBytes(p.format, e0);
    float in_scale[2] = {1.0f, 1.0f};
    for (int k = 0; k < 2; ++k)
      if (s.in[k] != nullptr && scaled) in_scale[k] = DevLoadScale(s.in[k], b, p.scale);
    float v[E];
    uint32_t absmax = 0;
#pragma unroll
    for (int j = 0; j < E; ++j) {
      const size_t i = (static_cast<size_t>(j / 2) * G + gl) * 2 + (j & 1);
      float x = 0.0f;
      if (i < n) {
        const size_t e = e0 + i;
        bool first = true;
        if (s.acc_in != nullptr) {
          x = s.acc_in[e];
          first = false;
        }
        if (s.local != nullptr) {
          const float y = DevLoadIo(s.local, e, s.local_type);
          x = first ? y : x + y;
          first = false;
        }
        for (int k = 0; k < 2; ++k) {
          if (s.in[k] == nullptr) continue;
          const float y =
              math::DequantizeValue(DevLoadCode(s.in[k] + code_offset, i, p.format), in_scale[k], p.format);
          x = first ? y : x + y;
          first = false;
        }
        if (s.divisor > 1) x = x / static_cast<float>(s.divisor);
        if (s.acc_out != nullptr) s.acc_out[e] = x;
        const uint32_t a = math::AbsBits(x);
        absmax = a > absmax ? a : absmax;
      }
      v[j] = x;
    }
    absmax = __reduce_max_sync(mask, absmax);
    if (s.out == nullptr) {
      if (s.deq_out != nullptr) {
#pragma unroll
        for (int j = 0; j < E; ++j) {
          const size_t i = (static_cast<size_t>(j / 2) * G + gl) * 2 + (j & 1);
          if (i < n) DevStoreIo(s.deq_out, e0 + i, s.deq_type, v[j]);
        }
      }
      continue;
    }
    math::BlockScale bs{1.0f, 1.0f, 0u, true};
    if (scaled) {
      bs = math::MakeBlockScale(absmax, p);
      if (gl == 0) DevStoreScale(s.out, b, p.scale, bs.stored);
    }
    uint8_t* values = s.out + code_offset;
#pragma unroll
    for (int j = 0; j < E; j += 2) {
      const size_t i = (static_cast<size_t>(j / 2) * G + gl) * 2;
      if (i >= n) continue;
      const bool two = i + 1 < n;
      const uint32_t c0 = math::QuantizeValue(v[j], bs, p, s.index_base + e0 + i);
      const uint32_t c1 = two ? math::QuantizeValue(v[j + 1], bs, p, s.index_base + e0 + i + 1) : 0u;
      DevStoreCodePair(values, i, p.format, c0, c1, two);
      if (s.deq_out != nullptr) {
        DevStoreIo(s.deq_out, e0 + i, s.deq_type, math::DequantizeValue(c0, bs.scale, p.format));
        if (two) DevStoreIo(s.deq_out, e0 + i + 1, s.deq_type, math::DequantizeValue(c1, bs.scale, p.format));
      }
    }
  }
}

int SmCount() {
  static int sms = [] {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return 80;
    return n;
  }();
  return sms;
}

template <int E>
int LaunchReg(const QuantParams& p, const QuantStep& step, const math::QuantLayout& layout, cudaStream_t stream) {
  const int G = static_cast<int>((p.block + E - 1) / E);
  const int threads = 256;
  const size_t blocks_per_cta = static_cast<size_t>(threads / 32) * (32 / G);
  size_t ctas = (layout.blocks + blocks_per_cta - 1) / blocks_per_cta;
  const size_t cap = static_cast<size_t>(SmCount()) * 8;
  if (ctas > cap) ctas = cap;
  QuantStepRegKernel<E><<<static_cast<unsigned>(ctas), threads, 0, stream>>>(p, step, layout, G);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int QuantStepAsync(const QuantParams& p, const QuantStep& step, void* stream) {
  if (step.count == 0) return 0;
  const math::QuantLayout layout = math::QuantLayoutOf(p, step.count);
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (p.block <= 128) return LaunchReg<4>(p, step, layout, st);
  if (p.block <= 256) return LaunchReg<8>(p, step, layout, st);
  if (p.block <= 512) return LaunchReg<16>(p, step, layout, st);
  if (p.block <= 1024) return LaunchReg<32>(p, step, layout, st);
  const int warps = WarpsPerCta(p.block);
  const size_t ctas = (layout.blocks + warps - 1) / warps;
  const size_t shared = static_cast<size_t>(warps) * p.block * sizeof(float);
  QuantStepKernel<<<static_cast<unsigned>(ctas), warps * 32, shared, static_cast<cudaStream_t>(stream)>>>(p, step,
                                                                                                          layout);
  return static_cast<int>(cudaGetLastError());
}

int QuantizeAsync(const QuantParams& p, const void* src, QuantIoType type, size_t count, uint64_t index_base,
                  uint8_t* out, void* stream) {
  QuantStep s{};
  s.count = count;
  s.index_base = index_base;
  s.local = src;
  s.local_type = type;
  s.out = out;
  return QuantStepAsync(p, s, stream);
}

int DequantizeAsync(const QuantParams& p, const uint8_t* in, size_t count, void* dst, QuantIoType type,
                    void* stream) {
  QuantStep s{};
  s.count = count;
  s.in[0] = in;
  s.deq_out = dst;
  s.deq_type = type;
  return QuantStepAsync(p, s, stream);
}

}  // namespace cuda
}  // namespace strata
