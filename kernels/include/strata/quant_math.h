// Block quantization math shared by the host kernels (src/exec/quant) and the CUDA kernels (kernels/quant):
// the formats, the encoded layout of a block range, the per-block scale, and per-element quantize/dequantize
// with round-to-nearest-even or stochastic rounding from a counter-based hash.
//
// Bit-identical results everywhere rest on three things: the block scale comes from the block's absmax taken
// on the float bits as integers (exact, order-free); each element goes through the same sequence of IEEE
// single-precision operations (callers compile with -ffp-contract=off / --fmad=false, so no FMA merges a
// multiply and an add); and random bits depend only on (seed, element index), never on a thread.
#pragma once

#include <math.h>

#include <cstddef>
#include <cstdint>

#include "strata/reduce_math.h"

namespace strata {
namespace math {

enum class QuantFormat : uint8_t { kBf16 = 0, kFp16 = 1, kFp8E4M3 = 2, kFp8E5M2 = 3, kInt8 = 4, kInt4 = 5 };
constexpr int kNumQuantFormats = 6;
enum class QuantScale : uint8_t { kFp32 = 0, kFp16 = 1 };
enum class QuantRounding : uint8_t { kNearest = 0, kStochastic = 1 };

constexpr uint32_t kQuantMinBlock = 32;
constexpr uint32_t kQuantMaxBlock = 4096;
// Block sizes are multiples of this, so an int4 block always starts on a byte.
constexpr uint32_t kQuantBlockMultiple = 32;
// The values region of an encoded range starts at this alignment from the range's first byte.
constexpr size_t kQuantValuesAlign = 16;

// Everything a kernel needs to know: trivially copyable, passed to CUDA kernels by value.
struct QuantParams {
  QuantFormat format;
  QuantScale scale;
  QuantRounding rounding;
  uint32_t block;  // elements per scale
  uint64_t seed;   // stochastic rounding only
};

// bf16 and fp16 are plain rounding casts (their exponent covers the range); the others carry one scale per
// block.
STRATA_HD STRATA_MATH_INLINE bool QuantHasScale(QuantFormat f) {
  return f != QuantFormat::kBf16 && f != QuantFormat::kFp16;
}

STRATA_HD STRATA_MATH_INLINE int QuantValueBits(QuantFormat f) {
  switch (f) {
    case QuantFormat::kBf16:
    case QuantFormat::kFp16:
      return 16;
    case QuantFormat::kInt4:
      return 4;
    default:
      return 8;
  }
}

// The magnitude the block's absmax maps to.
STRATA_HD STRATA_MATH_INLINE float QuantMaxCode(QuantFormat f) {
  switch (f) {
    case QuantFormat::kFp8E4M3:
      return 448.0f;
    case QuantFormat::kFp8E5M2:
      return 57344.0f;
    case QuantFormat::kInt8:
      return 127.0f;
    case QuantFormat::kInt4:
      return 7.0f;
    default:
      return 0.0f;
  }
}

STRATA_HD STRATA_MATH_INLINE size_t QuantScaleBytes(const QuantParams& p) {
  if (!QuantHasScale(p.format)) return 0;
  return p.scale == QuantScale::kFp16 ? 2 : 4;
}

// ---- encoded layout of a range of n elements (the range starts on a block boundary) ----
//
//   [scales: one per block, ceil(n / block) of them][pad to 16][values: n codes, packed]
//
// int4 packs two codes per byte, the even element in the low nibble; an odd n leaves the last high nibble 0.
// A range is self-contained: any block-aligned piece of a tensor can be encoded on its own (one slot).
struct QuantLayout {
  size_t blocks;
  size_t values_offset;
  size_t total_bytes;
};

STRATA_HD STRATA_MATH_INLINE size_t QuantValueBytes(QuantFormat f, size_t n) {
  return QuantValueBits(f) == 4 ? (n + 1) / 2 : n * static_cast<size_t>(QuantValueBits(f) / 8);
}

STRATA_HD STRATA_MATH_INLINE QuantLayout QuantLayoutOf(const QuantParams& p, size_t n) {
  QuantLayout l;
  l.blocks = (n + p.block - 1) / p.block;
  const size_t scale_bytes = l.blocks * QuantScaleBytes(p);
  l.values_offset = (scale_bytes + kQuantValuesAlign - 1) / kQuantValuesAlign * kQuantValuesAlign;
  l.total_bytes = l.values_offset + QuantValueBytes(p.format, n);
  return l;
}

STRATA_HD STRATA_MATH_INLINE size_t QuantEncodedBytes(const QuantParams& p, size_t n) {
  return n == 0 ? 0 : QuantLayoutOf(p, n).total_bytes;
}

// ---- counter-based random bits ----

// splitmix64's finalizer over (seed, index): 32 well-mixed bits that depend on nothing else.
STRATA_HD STRATA_MATH_INLINE uint32_t QuantHash(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<uint32_t>(z >> 32);
}

// A seed of its own for each (call, stream) pair, e.g. stream = the quantizing rank and stage, so two ranks
// quantizing the same element index draw independent bits.
STRATA_HD STRATA_MATH_INLINE uint64_t QuantDeriveSeed(uint64_t seed, uint64_t call, uint64_t stream) {
  const uint64_t a = QuantHash(seed, call);
  const uint64_t b = QuantHash(seed ^ 0x5bd1e9955bd1e995ull, stream);
  return seed ^ (a << 32 | b) ^ (call << 17) ^ stream;
}

// ---- the block scale ----

// |x| as integer bits: NaN > inf > finite, and an integer max is exact in any order or vector width.
STRATA_HD STRATA_MATH_INLINE uint32_t AbsBits(float x) { return FloatBits(x) & 0x7fffffffu; }

struct BlockScale {
  float scale;        // what dequantization multiplies by (after rounding to the scale format)
  float inv;          // what quantization multiplies by: 1 / scale, or 0 for a zero or non-finite block
  uint32_t stored;    // the scale's bits as stored (fp32 or fp16)
  bool finite;        // false: the block held inf or NaN; its codes are 0 and its scale NaN
};

// The smallest fp16 not below s (s >= 0), capped at the largest finite fp16 (a block whose absmax needs a
// larger scale saturates at the top code).
// Blocks whose absmax is below 2^-96 encode as zeros (scale 0).
constexpr uint32_t kQuantTinyAbsmaxBits = 31u << 23;

STRATA_HD STRATA_MATH_INLINE uint16_t HalfRoundUp(float s) {
  uint16_t h = FloatToHalf(s);
  if (h < 0x7c00u && HalfToFloat(h) < s) ++h;
  return h > 0x7bffu ? static_cast<uint16_t>(0x7bffu) : h;
}

STRATA_HD STRATA_MATH_INLINE BlockScale MakeBlockScale(uint32_t absmax_bits, const QuantParams& p) {
  BlockScale bs;
  if (absmax_bits >= 0x7f800000u) {
    bs.scale = BitsToFloat(0x7fc00000u);
    bs.inv = 0.0f;
    bs.stored = p.scale == QuantScale::kFp16 ? 0x7e00u : 0x7fc00000u;
    bs.finite = false;
    return bs;
  }
  if (absmax_bits < kQuantTinyAbsmaxBits) {
    // 1 / scale would overflow float for such blocks; they are encoded as zeros.
    bs.scale = 0.0f;
    bs.inv = 0.0f;
    bs.stored = 0;
    bs.finite = true;
    return bs;
  }
  float s = BitsToFloat(absmax_bits) / QuantMaxCode(p.format);
  if (p.scale == QuantScale::kFp16) {
    // Rounded up, so the block's absmax still fits the code range.
    bs.stored = HalfRoundUp(s);
    s = HalfToFloat(static_cast<uint16_t>(bs.stored));
  } else {
    bs.stored = FloatBits(s);
  }
  bs.scale = s;
  bs.inv = s > 0.0f ? 1.0f / s : 0.0f;
  bs.finite = true;
  return bs;
}

STRATA_HD STRATA_MATH_INLINE void StoreScale(uint8_t* scales, size_t block, QuantScale sf, uint32_t stored) {
  if (sf == QuantScale::kFp16) {
    const uint16_t h = static_cast<uint16_t>(stored);
    memcpy(scales + 2 * block, &h, 2);
  } else {
    memcpy(scales + 4 * block, &stored, 4);
  }
}

STRATA_HD STRATA_MATH_INLINE float LoadScale(const uint8_t* scales, size_t block, QuantScale sf) {
  if (sf == QuantScale::kFp16) {
    uint16_t h;
    memcpy(&h, scales + 2 * block, 2);
    return HalfToFloat(h);
  }
  float s;
  memcpy(&s, scales + 4 * block, 4);
  return s;
}

// ---- rounding ----

// Round to nearest even for |y| < 2^22: adding 1.5 * 2^23 pushes the fraction out of the mantissa, and the
// FPU's default rounding is to nearest even. Same result as cvtps2dq / rintf in the default mode.
STRATA_HD STRATA_MATH_INLINE float RoundSmallToNearestEven(float y) {
  const float kMagic = 12582912.0f;
  return (y + kMagic) - kMagic;
}

STRATA_HD STRATA_MATH_INLINE float ClampCode(float y, float qmax) { return y > qmax ? qmax : (y < -qmax ? -qmax : y); }

// Stochastic rounding to an integer: up with probability equal to the fraction (24 random bits).
STRATA_HD STRATA_MATH_INLINE float RoundStochastic(float y, uint32_t r) {
  const float lo = floorf(y);
  const float frac = y - lo;  // exact for |y| < 2^23
  const float u = static_cast<float>(r >> 8) * 5.9604644775390625e-8f;  // [0, 1) in steps of 2^-24
  return u < frac ? lo + 1.0f : lo;
}

namespace detail {

// Like RoundFloatToNarrow, but rounds the magnitude up with probability remainder / unit: exact for
// remainders of up to 32 bits; inputs below 2^-32 of the smallest subnormal round to 0.
template <int kMant, int kBias>
STRATA_HD STRATA_MATH_INLINE uint32_t StochasticFloatToNarrow(uint32_t a, uint32_t r) {
  const int exp = static_cast<int>(a >> 23);
  const int kMinNormalExp = 127 - kBias + 1;
  uint32_t q;
  uint64_t rem;
  int shift;
  if (exp >= kMinNormalExp) {
    const uint32_t rebased = a - (static_cast<uint32_t>(127 - kBias) << 23);
    shift = 23 - kMant;
    q = rebased >> shift;
    rem = rebased & ((1u << shift) - 1u);
  } else {
    shift = 151 - kBias - kMant - exp;
    if (shift > 32) return 0;
    const uint64_t m = (a & 0x7fffffu) | 0x800000u;
    q = static_cast<uint32_t>(m >> shift);
    rem = m & ((uint64_t{1} << shift) - 1u);
  }
  const uint64_t rbits = static_cast<uint64_t>(r) & ((uint64_t{1} << shift) - 1u);
  q += static_cast<uint32_t>((rem + rbits) >> shift);
  return q;
}

}  // namespace detail

STRATA_HD STRATA_MATH_INLINE uint16_t FloatToHalfStochastic(float f, uint32_t r) {
  const uint32_t u = FloatBits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return FloatToHalf(f);
  const uint32_t q = detail::StochasticFloatToNarrow<10, 15>(a, r);
  return static_cast<uint16_t>(sign | (q >= 0x7c00u ? 0x7c00u : q));
}

STRATA_HD STRATA_MATH_INLINE uint16_t FloatToBFloat16Stochastic(float f, uint32_t r) {
  const uint32_t u = FloatBits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return FloatToBFloat16(f);
  const uint32_t q = detail::StochasticFloatToNarrow<7, 127>(a, r);
  return static_cast<uint16_t>(sign | (q >= 0x7f80u ? 0x7f80u : q));
}

STRATA_HD STRATA_MATH_INLINE uint8_t FloatToFp8E4M3Stochastic(float f, uint32_t r) {
  const uint32_t u = FloatBits(f);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return FloatToFp8E4M3(f);
  const uint32_t q = detail::StochasticFloatToNarrow<3, 7>(a, r);
  return static_cast<uint8_t>(sign | (q > 0x7eu ? 0x7eu : q));
}

STRATA_HD STRATA_MATH_INLINE uint8_t FloatToFp8E5M2Stochastic(float f, uint32_t r) {
  const uint32_t u = FloatBits(f);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return FloatToFp8E5M2(f);
  const uint32_t q = detail::StochasticFloatToNarrow<2, 15>(a, r);
  return static_cast<uint8_t>(sign | (q > 0x7bu ? 0x7bu : q));
}

// ---- one element ----

// The code of x (16, 8 or 4 bits, in the low bits of the result). `index` is the element's index in the
// tensor, which keys the random bits of stochastic rounding.
STRATA_HD STRATA_MATH_INLINE uint32_t QuantizeValue(float x, const BlockScale& bs, const QuantParams& p,
                                                    uint64_t index) {
  const bool sr = p.rounding == QuantRounding::kStochastic;
  const uint32_t r = sr ? QuantHash(p.seed, index) : 0u;
  switch (p.format) {
    case QuantFormat::kBf16:
      return sr ? FloatToBFloat16Stochastic(x, r) : FloatToBFloat16(x);
    case QuantFormat::kFp16:
      return sr ? FloatToHalfStochastic(x, r) : FloatToHalf(x);
    case QuantFormat::kFp8E4M3: {
      if (!bs.finite) return 0;
      const float y = x * bs.inv;
      return sr ? FloatToFp8E4M3Stochastic(y, r) : FloatToFp8E4M3(y);
    }
    case QuantFormat::kFp8E5M2: {
      if (!bs.finite) return 0;
      const float y = x * bs.inv;
      return sr ? FloatToFp8E5M2Stochastic(y, r) : FloatToFp8E5M2(y);
    }
    case QuantFormat::kInt8:
    case QuantFormat::kInt4: {
      if (!bs.finite) return 0;
      const float qmax = QuantMaxCode(p.format);
      const float y = ClampCode(x * bs.inv, qmax);
      const float q = sr ? ClampCode(RoundStochastic(y, r), qmax) : RoundSmallToNearestEven(y);
      const uint32_t mask = p.format == QuantFormat::kInt4 ? 0xfu : 0xffu;
      return static_cast<uint32_t>(static_cast<int32_t>(q)) & mask;
    }
  }
  return 0;
}

STRATA_HD STRATA_MATH_INLINE float DequantizeValue(uint32_t code, float scale, QuantFormat f) {
  switch (f) {
    case QuantFormat::kBf16:
      return BFloat16ToFloat(static_cast<uint16_t>(code));
    case QuantFormat::kFp16:
      return HalfToFloat(static_cast<uint16_t>(code));
    case QuantFormat::kFp8E4M3:
      return Fp8E4M3ToFloat(static_cast<uint8_t>(code)) * scale;
    case QuantFormat::kFp8E5M2:
      return Fp8E5M2ToFloat(static_cast<uint8_t>(code)) * scale;
    case QuantFormat::kInt8:
      return static_cast<float>(static_cast<int8_t>(static_cast<uint8_t>(code))) * scale;
    case QuantFormat::kInt4: {
      const int32_t v = static_cast<int32_t>(code & 0xfu);
      return static_cast<float>(v >= 8 ? v - 16 : v) * scale;
    }
  }
  return 0.0f;
}

// Codes in the values region. int4 reads one nibble; writes go through StoreCodePair so a byte is written
// whole, once.
STRATA_HD STRATA_MATH_INLINE uint32_t LoadCode(const uint8_t* values, size_t i, QuantFormat f) {
  switch (QuantValueBits(f)) {
    case 16: {
      uint16_t h;
      memcpy(&h, values + 2 * i, 2);
      return h;
    }
    case 8:
      return values[i];
    default:
      return (values[i / 2] >> (4 * (i & 1))) & 0xfu;
  }
}

// Elements i and i + 1 (i even); `has_second` false for the last element of an odd range.
STRATA_HD STRATA_MATH_INLINE void StoreCodePair(uint8_t* values, size_t i, QuantFormat f, uint32_t c0, uint32_t c1,
                                                bool has_second) {
  switch (QuantValueBits(f)) {
    case 16: {
      const uint16_t h0 = static_cast<uint16_t>(c0), h1 = static_cast<uint16_t>(c1);
      memcpy(values + 2 * i, &h0, 2);
      if (has_second) memcpy(values + 2 * i + 2, &h1, 2);
      break;
    }
    case 8:
      values[i] = static_cast<uint8_t>(c0);
      if (has_second) values[i + 1] = static_cast<uint8_t>(c1);
      break;
    default:
      values[i / 2] = static_cast<uint8_t>((c0 & 0xfu) | (has_second ? (c1 & 0xfu) << 4 : 0u));
      break;
  }
}

// ---- the fused step, element by element ----

// Storage types a step reads from or writes to: fp32, fp16, bf16 (the eligible ones).
enum class QuantIoType : uint8_t { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2 };

STRATA_HD STRATA_MATH_INLINE float LoadIo(const void* p, size_t i, QuantIoType t) {
  switch (t) {
    case QuantIoType::kFloat16: {
      uint16_t h;
      memcpy(&h, static_cast<const uint8_t*>(p) + 2 * i, 2);
      return HalfToFloat(h);
    }
    case QuantIoType::kBFloat16: {
      uint16_t h;
      memcpy(&h, static_cast<const uint8_t*>(p) + 2 * i, 2);
      return BFloat16ToFloat(h);
    }
    default: {
      float f;
      memcpy(&f, static_cast<const uint8_t*>(p) + 4 * i, 4);
      return f;
    }
  }
}

STRATA_HD STRATA_MATH_INLINE void StoreIo(void* p, size_t i, QuantIoType t, float v) {
  switch (t) {
    case QuantIoType::kFloat16: {
      const uint16_t h = FloatToHalf(v);
      memcpy(static_cast<uint8_t*>(p) + 2 * i, &h, 2);
      break;
    }
    case QuantIoType::kBFloat16: {
      const uint16_t h = FloatToBFloat16(v);
      memcpy(static_cast<uint8_t*>(p) + 2 * i, &h, 2);
      break;
    }
    default:
      memcpy(static_cast<uint8_t*>(p) + 4 * i, &v, 4);
      break;
  }
}

// One fused step over a block-aligned range of `count` elements. The sum, in fp32 and in this fixed order:
//   acc_in + local + dequant(in[0]) + dequant(in[1]), then / divisor when divisor > 1
// (absent terms are skipped; the first present term is taken as is). Then any of:
//   acc_out  <- the sum in fp32 (a running partial sum that is never requantized)
//   out      <- the sum quantized (encoded range of `count` elements)
//   deq_out  <- the value `out` encodes, dequantized (the owner uses the same bytes as everyone), or the
//               sum itself when there is no `out`
// acc_out may alias acc_in, and deq_out may alias local (same type), exactly; nothing else may overlap.
struct QuantStep {
  size_t count;
  uint64_t index_base;  // tensor index of element 0: keys stochastic rounding
  const float* acc_in;
  const void* local;
  QuantIoType local_type;
  const uint8_t* in[2];
  float* acc_out;
  uint8_t* out;
  void* deq_out;
  QuantIoType deq_type;
  int divisor;
};

}  // namespace math
}  // namespace strata
