// The CUDA quantization kernels' templates (kernels/quant/quant_kernels.cu says how they work). Each
// quant_kernels_{f16,fp8,int}.cu instantiates LaunchFor for two formats, so the three build in parallel.
#pragma once

#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "quant/quant_kernels.h"

namespace strata {
namespace cuda {
namespace detail {

using math::QuantFormat;
using math::QuantIoType;
using math::QuantParams;
using math::QuantStep;

// Elements per thread: 64 bytes of fp32 input, 16 bytes of 8-bit codes. (8 and 32 ran slower on an H200:
// docs/PERFORMANCE.md.)
constexpr int kChunk = 16;
static_assert(math::kQuantBlockMultiple % kChunk == 0 && kChunk % 4 == 0, "a chunk is whole pieces of a block");
// Threads per CTA: kCtaThreads rounded down to whole groups (the largest block's group, 4096 / 16, is 256).
constexpr int kCtaThreads = 256;
static_assert(math::kQuantMaxBlock / kChunk <= kCtaThreads, "a group fits one CTA");
// CTAs kept resident per multiprocessor, which caps each kernel's registers: the general kernel 3 (80
// registers), the step 4 (64), quantize and dequantize alone 5 (48). More resident threads keep more loads in
// flight; with fewer registers than these the kernels spill.
constexpr int kMinCtasPerSm = 3;
constexpr int kStepCtasPerSm = 4;
constexpr int kLeanCtasPerSm = 5;

__host__ __device__ constexpr bool HasScale(QuantFormat f) {
  return f != QuantFormat::kBf16 && f != QuantFormat::kFp16;
}
__host__ __device__ constexpr int CodeBits(QuantFormat f) {
  return f == QuantFormat::kBf16 || f == QuantFormat::kFp16 ? 16 : (f == QuantFormat::kInt4 ? 4 : 8);
}

__device__ __forceinline__ float IoToFloat(uint32_t bits16, QuantIoType t) {
  return t == QuantIoType::kFloat16 ? math::HalfToFloat(static_cast<uint16_t>(bits16))
                                    : math::BFloat16ToFloat(static_cast<uint16_t>(bits16));
}

__device__ __forceinline__ uint32_t FloatToIo16(float v, QuantIoType t) {
  return t == QuantIoType::kFloat16 ? math::FloatToHalf(v) : math::FloatToBFloat16(v);
}

// ---- element by element (buffers off the vector alignment, the last and partial block) ----
//
// Values by typed accesses (a buffer is aligned to its element): the shared math's LoadIo/StoreIo go through
// memcpy, which nvcc lowers to byte accesses where it cannot prove alignment. Codes by math::LoadCode.

__device__ __forceinline__ float LoadIoAt(const void* p, size_t i, QuantIoType t) {
  if (t == QuantIoType::kFloat32) return static_cast<const float*>(p)[i];
  return IoToFloat(static_cast<const uint16_t*>(p)[i], t);
}

__device__ __forceinline__ void StoreIoAt(void* p, size_t i, QuantIoType t, float v) {
  if (t == QuantIoType::kFloat32)
    static_cast<float*>(p)[i] = v;
  else
    static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(FloatToIo16(v, t));
}

// ---- a piece: kPiece consecutive elements, one access per buffer ----
//
// A thread's chunk is kChunk / kPiece pieces spread over its block: piece k of the group's thread t covers
// elements (k * group + t) * kPiece .. + kPiece - 1 of the block. So each load or store instruction of a
// group covers one contiguous span (16 bytes per thread of fp32), and every 32-byte sector is read or written
// whole by one instruction; a thread's own 64 bytes in a row would leave each store half a sector.

constexpr int kPiece = 4;
constexpr int kPieces = kChunk / kPiece;

__device__ __forceinline__ void StoreIoPiece(void* p, size_t first, QuantIoType t, const float* x) {
  if (t == QuantIoType::kFloat32) {
    *reinterpret_cast<float4*>(static_cast<float*>(p) + first) = make_float4(x[0], x[1], x[2], x[3]);
  } else {
    *reinterpret_cast<uint2*>(static_cast<uint16_t*>(p) + first) = make_uint2(
        FloatToIo16(x[0], t) | FloatToIo16(x[1], t) << 16, FloatToIo16(x[2], t) | FloatToIo16(x[3], t) << 16);
  }
}

// Codes of elements first .. first + kPiece - 1 (first a multiple of kPiece), packed as stored.
template <QuantFormat F>
__device__ __forceinline__ void StoreCodePiece(uint8_t* values, size_t first, const uint32_t* c) {
  constexpr int kBits = CodeBits(F);
  constexpr uint32_t kMask = (1u << kBits) - 1u;
  if constexpr (kBits == 16) {
    *reinterpret_cast<uint2*>(values + 2 * first) =
        make_uint2((c[0] & kMask) | c[1] << 16, (c[2] & kMask) | c[3] << 16);
  } else if constexpr (kBits == 8) {
    *reinterpret_cast<uint32_t*>(values + first) =
        (c[0] & kMask) | (c[1] & kMask) << 8 | (c[2] & kMask) << 16 | (c[3] & kMask) << 24;
  } else {
    *reinterpret_cast<uint16_t*>(values + first / 2) =
        static_cast<uint16_t>((c[0] & kMask) | (c[1] & kMask) << 4 | (c[2] & kMask) << 8 | (c[3] & kMask) << 12);
  }
}

// Raw words of a piece, loaded now and decoded later, so every source's loads are in flight before the first
// value is used.
template <QuantIoType T>
__host__ __device__ constexpr int IoWords() {
  return T == QuantIoType::kFloat32 ? kPiece : kPiece / 2;
}

template <QuantIoType T>
__device__ __forceinline__ void LoadIoWords(const void* p, size_t first, uint32_t* w) {
  if constexpr (T == QuantIoType::kFloat32) {
    const uint4 a = *reinterpret_cast<const uint4*>(static_cast<const float*>(p) + first);
    w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w;
  } else {
    const uint2 a = *reinterpret_cast<const uint2*>(static_cast<const uint16_t*>(p) + first);
    w[0] = a.x, w[1] = a.y;
  }
}

template <QuantIoType T>
__device__ __forceinline__ void DecodeIoWords(const uint32_t* w, float* x) {
  if constexpr (T == QuantIoType::kFloat32) {
#pragma unroll
    for (int j = 0; j < kPiece; ++j) x[j] = math::BitsToFloat(w[j]);
  } else {
#pragma unroll
    for (int h = 0; h < kPiece / 2; ++h)
      x[2 * h] = IoToFloat(w[h] & 0xffffu, T), x[2 * h + 1] = IoToFloat(w[h] >> 16, T);
  }
}

template <QuantFormat F>
__host__ __device__ constexpr int CodeWords() {
  return CodeBits(F) == 16 ? 2 : 1;
}

template <QuantFormat F>
__device__ __forceinline__ void LoadCodeWords(const uint8_t* values, size_t first, uint32_t* w) {
  constexpr int kBits = CodeBits(F);
  if constexpr (kBits == 16) {
    const uint2 a = *reinterpret_cast<const uint2*>(values + 2 * first);
    w[0] = a.x, w[1] = a.y;
  } else if constexpr (kBits == 8) {
    w[0] = *reinterpret_cast<const uint32_t*>(values + first);
  } else {
    w[0] = *reinterpret_cast<const uint16_t*>(values + first / 2);
  }
}

template <QuantFormat F>
__device__ __forceinline__ void DecodeCodeWords(const uint32_t* w, uint32_t* c) {
  constexpr int kBits = CodeBits(F), kPerWord = 32 / kBits;
#pragma unroll
  for (int j = 0; j < kPiece; ++j) c[j] = (w[j / kPerWord] >> (kBits * (j % kPerWord))) & ((1u << kBits) - 1u);
}

// The first term present is taken as is (0 + -0 would lose the sign); the others are added in order.
__device__ __forceinline__ void Accumulate(float (&v)[kChunk], const float (&x)[kChunk], bool* first) {
  if (*first) {
#pragma unroll
    for (int i = 0; i < kChunk; ++i) v[i] = x[i];
  } else {
#pragma unroll
    for (int i = 0; i < kChunk; ++i) v[i] = v[i] + x[i];
  }
  *first = false;
}

// Scales are read and written whole where the range is aligned, byte by byte where it is not.
__device__ __forceinline__ float ScaleOf(const uint8_t* scales, size_t block, math::QuantScale sf, bool aligned) {
  if (!aligned) return math::LoadScale(scales, block, sf);
  if (sf == math::QuantScale::kFp16) return math::HalfToFloat(reinterpret_cast<const uint16_t*>(scales)[block]);
  return reinterpret_cast<const float*>(scales)[block];
}

__device__ __forceinline__ void SetScale(uint8_t* scales, size_t block, math::QuantScale sf, uint32_t stored,
                                         bool aligned) {
  if (!aligned)
    math::StoreScale(scales, block, sf, stored);
  else if (sf == math::QuantScale::kFp16)
    reinterpret_cast<uint16_t*>(scales)[block] = static_cast<uint16_t>(stored);
  else
    reinterpret_cast<uint32_t*>(scales)[block] = stored;
}

// The largest of the group's absmaxes, in every thread of the group. `group` threads, consecutive, hold one
// block; a warp-aligned power of two up to 32 reduces by shuffles, anything else through shared memory.
__device__ __forceinline__ uint32_t GroupMax(uint32_t v, int group, uint32_t* slots) {
  const bool pow2 = (group & (group - 1)) == 0;
  if (pow2) {
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
      if (o < group) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
    if (group <= 32) return v;
  }
  const int g = threadIdx.x / group;
  if (threadIdx.x < blockDim.x / group) slots[threadIdx.x] = 0;
  __syncthreads();
  if (!pow2 || threadIdx.x % 32 == 0) atomicMax(&slots[g], v);
  __syncthreads();
  return slots[g];
}

// int8 and int4 codes rounded to nearest: the same value as math::QuantizeValue, taken from the bits of
// y + 1.5 * 2^23 (whose low mantissa bits hold round(y) in two's complement for |y| < 2^22), without the
// float-to-integer conversion.
template <QuantFormat F>
__device__ __forceinline__ uint32_t IntCodeNearest(float x, const math::BlockScale& bs) {
  constexpr float kMax = F == QuantFormat::kInt8 ? 127.0f : 7.0f;
  constexpr uint32_t kMask = F == QuantFormat::kInt8 ? 0xffu : 0xfu;
  const float y = math::ClampCode(x * bs.inv, kMax);
  return bs.finite ? math::FloatBits(y + 12582912.0f) & kMask : 0u;
}

// fp8 codes rounded to nearest, two per conversion instruction where the chip has one (sm_89 and later):
// the same bytes as math::QuantizeValue for a finite block, whose scaled values are finite (saturating past
// the largest finite code, as the shared math does). Elsewhere, the shared math element by element.
template <QuantFormat F>
__device__ __forceinline__ void Fp8CodesNearest(const float (&v)[kChunk], const math::BlockScale& bs,
                                                const QuantParams& q, uint32_t (&c)[kChunk]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  (void)q;
  constexpr __nv_fp8_interpretation_t kKind = F == QuantFormat::kFp8E4M3 ? __NV_E4M3 : __NV_E5M2;
#pragma unroll
  for (int i = 0; i < kChunk; i += 2) {
    const uint32_t pair =
        __nv_cvt_float2_to_fp8x2(make_float2(v[i] * bs.inv, v[i + 1] * bs.inv), __NV_SATFINITE, kKind);
    c[i] = bs.finite ? (pair & 0xffu) : 0u;
    c[i + 1] = bs.finite ? (pair >> 8) : 0u;
  }
#else
#pragma unroll
  for (int i = 0; i < kChunk; ++i) c[i] = math::QuantizeValue(v[i], bs, q, 0);
#endif
}

// Where a thread's elements are: element j of piece k is piece_first[k] + j. kWhole: all of them are in
// range and every buffer allows the pieces' vector accesses; otherwise each element is checked and read or
// written on its own.
struct Chunk {
  size_t block;
  size_t piece_first[kPieces];
  size_t count;
  bool aligned;
};

#define STRATA_EACH_ELEMENT(body)                                                                          \
  _Pragma("unroll") for (int k = 0; k < kPieces; ++k) _Pragma("unroll") for (int j = 0; j < kPiece; ++j) { \
    const int i = k * kPiece + j;                                                                          \
    const size_t e = ch.piece_first[k] + j;                                                                \
    const bool valid = kWhole || e < ch.count;                                                             \
    (void)i, (void)e, (void)valid;                                                                         \
    body;                                                                                                  \
  }

// The chunk's sum in fp32 into v (acc_out written), and its absmax as float bits.
template <QuantFormat F, QuantIoType T, bool kWhole>
__device__ __forceinline__ uint32_t Gather(const QuantParams& p, const QuantStep& s, size_t code_offset,
                                           const Chunk& ch, float (&v)[kChunk]) {
  bool first_term = true;
  float x[kChunk];
  if constexpr (kWhole) {
    // Every load first, then the arithmetic.
    uint32_t acc_w[kChunk], local_w[kPieces * IoWords<T>()], code_w[2][kPieces * CodeWords<F>()];
    float scale[2] = {1.0f, 1.0f};
    if (s.acc_in != nullptr) {
#pragma unroll
      for (int k = 0; k < kPieces; ++k)
        LoadIoWords<QuantIoType::kFloat32>(s.acc_in, ch.piece_first[k], acc_w + k * kPiece);
    }
    if (s.local != nullptr) {
#pragma unroll
      for (int k = 0; k < kPieces; ++k) LoadIoWords<T>(s.local, ch.piece_first[k], local_w + k * IoWords<T>());
    }
#pragma unroll
    for (int src = 0; src < 2; ++src) {
      if (s.in[src] == nullptr) continue;
      if (HasScale(F)) scale[src] = ScaleOf(s.in[src], ch.block, p.scale, true);
#pragma unroll
      for (int k = 0; k < kPieces; ++k)
        LoadCodeWords<F>(s.in[src] + code_offset, ch.piece_first[k], code_w[src] + k * CodeWords<F>());
    }
    if (s.acc_in != nullptr) {
#pragma unroll
      for (int k = 0; k < kPieces; ++k) DecodeIoWords<QuantIoType::kFloat32>(acc_w + k * kPiece, x + k * kPiece);
      Accumulate(v, x, &first_term);
    }
    if (s.local != nullptr) {
#pragma unroll
      for (int k = 0; k < kPieces; ++k) DecodeIoWords<T>(local_w + k * IoWords<T>(), x + k * kPiece);
      Accumulate(v, x, &first_term);
    }
#pragma unroll
    for (int src = 0; src < 2; ++src) {
      if (s.in[src] == nullptr) continue;
      uint32_t c[kChunk];
#pragma unroll
      for (int k = 0; k < kPieces; ++k) DecodeCodeWords<F>(code_w[src] + k * CodeWords<F>(), c + k * kPiece);
#pragma unroll
      for (int i = 0; i < kChunk; ++i) x[i] = math::DequantizeValue(c[i], scale[src], F);
      Accumulate(v, x, &first_term);
    }
  } else {
    if (s.acc_in != nullptr) {
      STRATA_EACH_ELEMENT(x[i] = valid ? s.acc_in[e] : 0.0f)
      Accumulate(v, x, &first_term);
    }
    if (s.local != nullptr) {
      STRATA_EACH_ELEMENT(x[i] = valid ? LoadIoAt(s.local, e, T) : 0.0f)
      Accumulate(v, x, &first_term);
    }
#pragma unroll
    for (int src = 0; src < 2; ++src) {
      if (s.in[src] == nullptr) continue;
      const float scale = HasScale(F) ? ScaleOf(s.in[src], ch.block, p.scale, ch.aligned) : 1.0f;
      const uint8_t* values = s.in[src] + code_offset;
      uint32_t c[kChunk];
      STRATA_EACH_ELEMENT(c[i] = valid ? math::LoadCode(values, e, F) : 0u)
#pragma unroll
      for (int i = 0; i < kChunk; ++i) x[i] = math::DequantizeValue(c[i], scale, F);
      Accumulate(v, x, &first_term);
    }
  }
  if (s.divisor > 1) {
    const float d = static_cast<float>(s.divisor);
#pragma unroll
    for (int i = 0; i < kChunk; ++i) v[i] = v[i] / d;
  }
  if (s.acc_out != nullptr) {
    if (kWhole) {
#pragma unroll
      for (int k = 0; k < kPieces; ++k)
        StoreIoPiece(s.acc_out, ch.piece_first[k], QuantIoType::kFloat32, v + k * kPiece);
    } else {
      STRATA_EACH_ELEMENT(if (valid) s.acc_out[e] = v[i])
    }
  }
  uint32_t absmax = 0;
  if (HasScale(F) && s.out != nullptr) {
    STRATA_EACH_ELEMENT(if (valid) absmax = max(absmax, math::AbsBits(v[i])))
  }
  return absmax;
}

template <bool kWhole>
__device__ __forceinline__ void StoreDequantized(const QuantStep& s, const Chunk& ch, const float (&v)[kChunk]) {
  if (kWhole) {
#pragma unroll
    for (int k = 0; k < kPieces; ++k) StoreIoPiece(s.deq_out, ch.piece_first[k], s.deq_type, v + k * kPiece);
  } else {
    STRATA_EACH_ELEMENT(if (valid) StoreIoAt(s.deq_out, e, s.deq_type, v[i]))
  }
}

// The chunk's codes (and, with deq_out, what they decode to) under the block's scale.
template <QuantFormat F, bool kWhole>
__device__ __forceinline__ void Emit(const QuantParams& q, const QuantStep& s, size_t code_offset, const Chunk& ch,
                                     const math::BlockScale& bs, float (&v)[kChunk]) {
  uint32_t c[kChunk];
  if ((F == QuantFormat::kInt8 || F == QuantFormat::kInt4) && q.rounding == math::QuantRounding::kNearest) {
#pragma unroll
    for (int i = 0; i < kChunk; ++i) c[i] = IntCodeNearest<F>(v[i], bs);
  } else if ((F == QuantFormat::kFp8E4M3 || F == QuantFormat::kFp8E5M2) &&
             q.rounding == math::QuantRounding::kNearest) {
    Fp8CodesNearest<F>(v, bs, q, c);
  } else {
    STRATA_EACH_ELEMENT(c[i] = math::QuantizeValue(v[i], bs, q, s.index_base + e))
  }
  uint8_t* values = s.out + code_offset;
  if (kWhole) {
#pragma unroll
    for (int k = 0; k < kPieces; ++k) StoreCodePiece<F>(values, ch.piece_first[k], c + k * kPiece);
  } else {
    // Pairs: an int4 byte is written whole, once.
#pragma unroll
    for (int k = 0; k < kPieces; ++k)
#pragma unroll
      for (int j = 0; j < kPiece; j += 2) {
        const size_t e = ch.piece_first[k] + j;
        if (e < ch.count) math::StoreCodePair(values, e, F, c[k * kPiece + j], c[k * kPiece + j + 1], e + 1 < ch.count);
      }
  }
  if (s.deq_out != nullptr) {
#pragma unroll
    for (int i = 0; i < kChunk; ++i) v[i] = math::DequantizeValue(c[i], bs.scale, F);
    StoreDequantized<kWhole>(s, ch, v);
  }
}

#undef STRATA_EACH_ELEMENT

// Launch shape: `group` = block / kChunk threads per quantization block, blockDim.x = a whole number of
// groups, one CTA for every blockDim.x / group blocks. `vec`: every buffer allows the pieces' vector accesses.
// What a launch reads and writes. The specialized modes drop every other source and output at compile time,
// which leaves them few enough registers for kLeanCtasPerSm resident CTAs: more loads in flight per
// multiprocessor than the general kernel's kMinCtasPerSm.
enum class Mode {
  kGeneral,
  kQuantize,    // local -> out (quantize alone, a sender's first slot)
  kStep,        // local + in[0] -> out (a ring or direct step: dequantize, accumulate, quantize)
  kDequantize,  // in[0] -> deq_out (an allgather piece arriving)
};

template <QuantFormat F, QuantIoType T, Mode M>
__global__ void __launch_bounds__(kCtaThreads, M == Mode::kGeneral
                                                   ? kMinCtasPerSm
                                                   : (M == Mode::kStep ? kStepCtasPerSm : kLeanCtasPerSm))
    QuantChunkKernel(QuantParams p, QuantStep s, math::QuantLayout layout, int group, bool vec) {
  __shared__ uint32_t slots[kCtaThreads];
  if constexpr (M != Mode::kGeneral) {
    s.acc_in = nullptr;
    if (M == Mode::kDequantize) s.local = nullptr;
    if (M == Mode::kQuantize) s.in[0] = nullptr;
    s.in[1] = nullptr;
    s.acc_out = nullptr;
    if (M != Mode::kDequantize) s.deq_out = nullptr;
    if (M == Mode::kDequantize) s.out = nullptr;
    s.divisor = 1;
  }
  QuantParams q = p;
  q.format = F;  // a constant from here on: QuantizeValue's switch folds away
  const int t = threadIdx.x % group;
  Chunk ch;
  ch.block = static_cast<size_t>(blockIdx.x) * (blockDim.x / group) + threadIdx.x / group;
  ch.count = s.count;
  ch.aligned = vec;
  const size_t block_first = ch.block * p.block;
#pragma unroll
  for (int k = 0; k < kPieces; ++k) ch.piece_first[k] = block_first + static_cast<size_t>(k * group + t) * kPiece;
  if (blockIdx.x == 0 && threadIdx.x == 0 && s.out != nullptr) {
    const size_t scale_end = layout.blocks * math::QuantScaleBytes(p);
    for (size_t i = scale_end; i < layout.values_offset; ++i) s.out[i] = 0;
  }
  const bool any = ch.piece_first[0] < s.count;
  const bool whole = vec && block_first + p.block <= s.count;
  const size_t code_offset = layout.values_offset;

  float v[kChunk] = {};  // a step with no source (the host kernels refuse one) encodes zeros
  uint32_t absmax = 0;
  if (whole)
    absmax = Gather<F, T, true>(p, s, code_offset, ch, v);
  else if (any)
    absmax = Gather<F, T, false>(p, s, code_offset, ch, v);
  if (s.out == nullptr) {
    if (s.deq_out == nullptr || !any) return;
    if (whole)
      StoreDequantized<true>(s, ch, v);
    else
      StoreDequantized<false>(s, ch, v);
    return;
  }
  math::BlockScale bs{1.0f, 1.0f, 0u, true};
  if (HasScale(F)) {
    absmax = GroupMax(absmax, group, slots);  // every thread of the CTA takes part
    if (!any) return;
    bs = math::MakeBlockScale(absmax, q);
    if (t == 0) SetScale(s.out, ch.block, p.scale, bs.stored, vec);
  } else if (!any) {
    return;
  }
  if (whole)
    Emit<F, true>(q, s, code_offset, ch, bs, v);
  else
    Emit<F, false>(q, s, code_offset, ch, bs, v);
}

inline bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

inline Mode ModeOf(const QuantStep& s) {
  const bool plain = s.acc_in == nullptr && s.in[1] == nullptr && s.acc_out == nullptr && s.divisor <= 1;
  if (!plain) return Mode::kGeneral;
  if (s.local != nullptr && s.in[0] == nullptr && s.out != nullptr && s.deq_out == nullptr) return Mode::kQuantize;
  if (s.local != nullptr && s.local_type == QuantIoType::kFloat32 && s.in[0] != nullptr && s.out != nullptr &&
      s.deq_out == nullptr)
    return Mode::kStep;
  if (s.local == nullptr && s.in[0] != nullptr && s.out == nullptr && s.deq_out != nullptr) return Mode::kDequantize;
  return Mode::kGeneral;
}

template <QuantFormat F, QuantIoType T, Mode M>
int Launch(const QuantParams& p, const QuantStep& s, const math::QuantLayout& layout, cudaStream_t stream) {
  const int group = static_cast<int>(p.block / kChunk);
  const int per_cta = kCtaThreads / group;
  const size_t ctas = (layout.blocks + per_cta - 1) / per_cta;
  const bool vec = Aligned16(s.acc_in) && Aligned16(s.local) && Aligned16(s.in[0]) && Aligned16(s.in[1]) &&
                   Aligned16(s.acc_out) && Aligned16(s.out) && Aligned16(s.deq_out);
  QuantChunkKernel<F, T, M><<<static_cast<unsigned>(ctas), per_cta * group, 0, stream>>>(p, s, layout, group, vec);
  return static_cast<int>(cudaGetLastError());
}

// The step and dequantize modes are built for fp32 I/O alone (the general kernel serves fp16 and bf16 there).
// 0 on success, else the cudaError_t of the launch.
// The launch of mode M for the local input's type `type`.
template <QuantFormat F, Mode M>
int LaunchForType(QuantIoType type, const QuantParams& p, const QuantStep& s, const math::QuantLayout& layout,
                  cudaStream_t stream) {
  switch (type) {
    case QuantIoType::kFloat16:
      return Launch<F, QuantIoType::kFloat16, M>(p, s, layout, stream);
    case QuantIoType::kBFloat16:
      return Launch<F, QuantIoType::kBFloat16, M>(p, s, layout, stream);
    default:
      return Launch<F, QuantIoType::kFloat32, M>(p, s, layout, stream);
  }
}

template <QuantFormat F>
int LaunchFor(const QuantParams& p, const QuantStep& s, const math::QuantLayout& layout, cudaStream_t stream) {
  switch (ModeOf(s)) {
    case Mode::kStep:
      return Launch<F, QuantIoType::kFloat32, Mode::kStep>(p, s, layout, stream);
    case Mode::kDequantize:
      return Launch<F, QuantIoType::kFloat32, Mode::kDequantize>(p, s, layout, stream);
    case Mode::kQuantize:
      return LaunchForType<F, Mode::kQuantize>(s.local_type, p, s, layout, stream);
    default:
      return LaunchForType<F, Mode::kGeneral>(s.local != nullptr ? s.local_type : QuantIoType::kFloat32, p, s, layout,
                                              stream);
  }
}

}  // namespace detail
}  // namespace cuda
}  // namespace strata
