// The host quantization loops, written once and compiled once per ISA.
//
// Included without STRATA_QUANT_ISA_NAMESPACE (by the dispatcher) this header only declares each ISA's
// RunStep. host_quant_{scalar,avx2,avx512}.cc define the namespace first and get the loops, as
// src/exec/reduce does, so copies built with different -m flags never merge at link time.
//
// A step works block by block: the block's sum is built in an L1-resident fp32 buffer, then its absmax,
// scale and codes are computed from that buffer; memory sees one pass. Round-to-nearest int8, int4, fp16, bf16
// and both fp8 formats have AVX2 intrinsics (the AVX-512 build uses the same 256-bit code, plus whatever GCC
// vectorizes wider); stochastic rounding runs the per-element math in every build.
#pragma once

#include <cstddef>
#include <cstdint>

#include "strata/quant_math.h"

namespace strata {
namespace quant_scalar {
void RunStep(const math::QuantParams& p, const math::QuantStep& s);
}
namespace quant_avx2 {
void RunStep(const math::QuantParams& p, const math::QuantStep& s);
}
namespace quant_avx512 {
void RunStep(const math::QuantParams& p, const math::QuantStep& s);
}
}  // namespace strata

#if defined(STRATA_QUANT_ISA_NAMESPACE)

#include <cstring>

#include "exec/host_reduce.h"
#include "exec/x86_intrinsics.h"

namespace strata {
namespace STRATA_QUANT_ISA_NAMESPACE {

using math::QuantFormat;
using math::QuantIoType;
using math::QuantParams;
using math::QuantStep;

#if defined(__AVX2__)
// ---- 8-lane conversions, bit for bit those of strata/reduce_math.h ----

inline __m256 Bf16ToFloat8(const void* src) {
  const __m128i h = _mm_loadu_si128(static_cast<const __m128i*>(src));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// FloatToBFloat16: round to nearest even by adding 0x7fff plus the kept lsb; NaN kept, made quiet.
inline __m128i FloatToBf16x8(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)),
                                         _mm256_and_si256(_mm256_srli_epi32(u, 16), one)), 16);
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  const __m256i h = _mm256_blendv_epi8(rounded, quiet, nan);
  return _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// 8 fp8 codes (the low bytes of `codes`) to float.
inline __m256 Fp8E4M3ToFloat8(__m128i codes) {
  const __m256i v = _mm256_cvtepu8_epi32(codes);
  const __m256i a = _mm256_and_si256(v, _mm256_set1_epi32(0x7f));
  const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0x80)), 24);
  // a << 20 puts e4m3's exponent and mantissa where float's go; times 2^120 rebiases them (7 -> 127), and
  // an e4m3 subnormal is a float subnormal there, which the product makes normal exactly.
  const __m256 mag = _mm256_mul_ps(_mm256_castsi256_ps(_mm256_slli_epi32(a, 20)),
                                   _mm256_castsi256_ps(_mm256_set1_epi32(0x7b800000)));  // 2^120
  const __m256i nan = _mm256_cmpeq_epi32(a, _mm256_set1_epi32(0x7f));
  const __m256i bits = _mm256_blendv_epi8(_mm256_castps_si256(mag), _mm256_set1_epi32(0x7fc00000), nan);
  return _mm256_castsi256_ps(_mm256_or_si256(bits, sign));
}

inline __m256 Fp8E5M2ToFloat8(__m128i codes) {
  // e5m2 is the top byte of an fp16; F16C converts that as HalfToFloat does.
  return _mm256_cvtph_ps(_mm_slli_epi16(_mm_cvtepu8_epi16(codes), 8));
}

// detail::RoundFloatToNarrow<kMant, kBias> of |v|'s bits, for finite v: round to nearest even, a carry moving
// to the next exponent. Below the narrow type's smallest normal the result counts smallest subnormals, and
// |v| times their inverse (a power of two, exact) rounded by cvtps2dq is that count.
template <int kMant, int kBias>
inline __m256i RoundToNarrow8(__m256i a) {
  constexpr int kShift = 23 - kMant;
  constexpr int kMinNormalExp = 127 - kBias + 1;
  const __m256i rebased = _mm256_sub_epi32(a, _mm256_set1_epi32((127 - kBias) << 23));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(rebased, kShift), _mm256_set1_epi32(1));
  const __m256i normal = _mm256_srli_epi32(
      _mm256_add_epi32(rebased, _mm256_add_epi32(_mm256_set1_epi32((1 << (kShift - 1)) - 1), lsb)), kShift);
  const __m256 inverse_unit = _mm256_castsi256_ps(_mm256_set1_epi32((127 + kBias + kMant - 1) << 23));
  const __m256i subnormal = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_castsi256_ps(a), inverse_unit));
  const __m256i is_normal = _mm256_cmpgt_epi32(a, _mm256_set1_epi32((kMinNormalExp << 23) - 1));
  return _mm256_blendv_epi8(subnormal, normal, is_normal);
}

// FloatToFp8E4M3 (saturating; NaN to s.1111.111) or FloatToFp8E5M2 (saturating finite values, inf kept,
// NaN quiet) of 8 floats, as 32-bit codes.
template <QuantFormat kFormat>
inline __m256i FloatToFp8x8(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(u, 24), _mm256_set1_epi32(0x80));
  const __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  const __m256i inf = _mm256_set1_epi32(0x7f800000);
  const __m256i nan = _mm256_cmpgt_epi32(a, inf);
  __m256i q;
  if (kFormat == QuantFormat::kFp8E4M3) {
    // Infinity rounds to a code past the largest and saturates with them.
    q = _mm256_min_epu32(RoundToNarrow8<3, 7>(_mm256_min_epu32(a, inf)), _mm256_set1_epi32(0x7e));
    q = _mm256_blendv_epi8(q, _mm256_set1_epi32(0x7f), nan);
  } else {
    q = _mm256_min_epu32(RoundToNarrow8<2, 15>(a), _mm256_set1_epi32(0x7b));
    q = _mm256_blendv_epi8(q, _mm256_set1_epi32(0x7c), _mm256_cmpeq_epi32(a, inf));
    q = _mm256_blendv_epi8(q, _mm256_set1_epi32(0x7e), nan);
  }
  return _mm256_or_si256(q, sign);
}

inline void StoreCodes8(uint8_t* dst, __m256i q) {
  const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), _mm_packus_epi16(w, w));
}
#endif

// ---- block primitives: generic versions (per-element math), then the vector ones ----

// t = src (first) or t += src, src of an I/O type.
inline void LoadIoBlock(float* t, const void* src, size_t n, QuantIoType type, bool first) {
  size_t i = 0;
#if defined(__AVX2__)
  if (type == QuantIoType::kFloat16) {
    for (; i + 8 <= n; i += 8) {
      const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(
          static_cast<const uint16_t*>(src) + i)));
      _mm256_storeu_ps(t + i, first ? v : _mm256_add_ps(_mm256_loadu_ps(t + i), v));
    }
  } else if (type == QuantIoType::kBFloat16) {
    for (; i + 8 <= n; i += 8) {
      const __m256 v = Bf16ToFloat8(static_cast<const uint16_t*>(src) + i);
      _mm256_storeu_ps(t + i, first ? v : _mm256_add_ps(_mm256_loadu_ps(t + i), v));
    }
  }
#endif
  if (type == QuantIoType::kFloat32) {
    const float* f = static_cast<const float*>(src);
    if (first) {
      HostCopyVector(t, f, n * sizeof(float));
    } else {
      for (; i < n; ++i) t[i] = t[i] + f[i];
    }
    return;
  }
  for (; i < n; ++i) {
    const float v = math::LoadIo(src, i, type);
    t[i] = first ? v : t[i] + v;
  }
}

inline void StoreIoBlock(const float* t, void* dst, size_t n, QuantIoType type) {
  size_t i = 0;
  if (type == QuantIoType::kFloat32) {
    HostCopyVector(dst, t, n * sizeof(float));
    return;
  }
#if defined(__AVX2__)
  if (type == QuantIoType::kFloat16) {
    for (; i + 8 <= n; i += 8) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint16_t*>(dst) + i),
                       _mm256_cvtps_ph(_mm256_loadu_ps(t + i), _MM_FROUND_TO_NEAREST_INT));
    }
  } else if (type == QuantIoType::kBFloat16) {
    for (; i + 8 <= n; i += 8) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint16_t*>(dst) + i),
                       FloatToBf16x8(_mm256_loadu_ps(t + i)));
    }
  }
#endif
  for (; i < n; ++i) math::StoreIo(dst, i, type, t[i]);
}

// t = dequant(values) (first) or t += dequant(values); `values` is the block's first code.
inline void AddDequantBlock(float* t, const uint8_t* values, float scale, size_t n, QuantFormat f, bool first) {
  size_t i = 0;
  if (f == QuantFormat::kFp16) {
    LoadIoBlock(t, values, n, QuantIoType::kFloat16, first);
    return;
  }
  if (f == QuantFormat::kBf16) {
    LoadIoBlock(t, values, n, QuantIoType::kBFloat16, first);
    return;
  }
#if defined(__AVX2__)
  const __m256 vs = _mm256_set1_ps(scale);
  if (f == QuantFormat::kInt8) {
    for (; i + 8 <= n; i += 8) {
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(values + i));
      const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)), vs);
      _mm256_storeu_ps(t + i, first ? v : _mm256_add_ps(_mm256_loadu_ps(t + i), v));
    }
  } else if (f == QuantFormat::kInt4) {
    const __m128i low4 = _mm_set1_epi8(0x0f);
    const __m128i eight = _mm_set1_epi8(8);
    for (; i + 16 <= n; i += 16) {
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(values + i / 2));
      const __m128i lo = _mm_and_si128(b, low4);
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), low4);
      // Element order (even element in the low nibble), then sign-extend each nibble: (v ^ 8) - 8.
      const __m128i codes = _mm_sub_epi8(_mm_xor_si128(_mm_unpacklo_epi8(lo, hi), eight), eight);
      const __m256 v0 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(codes)), vs);
      const __m256 v1 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(codes, 8))), vs);
      _mm256_storeu_ps(t + i, first ? v0 : _mm256_add_ps(_mm256_loadu_ps(t + i), v0));
      _mm256_storeu_ps(t + i + 8, first ? v1 : _mm256_add_ps(_mm256_loadu_ps(t + i + 8), v1));
    }
  } else if (f == QuantFormat::kFp8E4M3 || f == QuantFormat::kFp8E5M2) {
    const bool e4m3 = f == QuantFormat::kFp8E4M3;
    for (; i + 8 <= n; i += 8) {
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(values + i));
      const __m256 v = _mm256_mul_ps(e4m3 ? Fp8E4M3ToFloat8(b) : Fp8E5M2ToFloat8(b), vs);
      _mm256_storeu_ps(t + i, first ? v : _mm256_add_ps(_mm256_loadu_ps(t + i), v));
    }
  }
#endif
  for (; i < n; ++i) {
    const float v = math::DequantizeValue(math::LoadCode(values, i, f), scale, f);
    t[i] = first ? v : t[i] + v;
  }
}

inline uint32_t AbsMaxBlock(const float* t, size_t n) {
  size_t i = 0;
  uint32_t m = 0;
#if defined(__AVX2__)
  const __m256i mask = _mm256_set1_epi32(0x7fffffff);
  __m256i vm = _mm256_setzero_si256();
  for (; i + 8 <= n; i += 8) {
    vm = _mm256_max_epu32(vm, _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(t + i)), mask));
  }
  __m128i v4 = _mm_max_epu32(_mm256_castsi256_si128(vm), _mm256_extracti128_si256(vm, 1));
  v4 = _mm_max_epu32(v4, _mm_shuffle_epi32(v4, 0x4e));
  v4 = _mm_max_epu32(v4, _mm_shuffle_epi32(v4, 0xb1));
  m = static_cast<uint32_t>(_mm_cvtsi128_si32(v4));
#endif
  for (; i < n; ++i) {
    const uint32_t a = math::AbsBits(t[i]);
    m = a > m ? a : m;
  }
  return m;
}

// values <- codes of t[0..n), the block's first element being tensor element `index0`.
inline void QuantizeBlock(const float* t, size_t n, const math::BlockScale& bs, const QuantParams& p,
                          uint64_t index0, uint8_t* values) {
  size_t i = 0;
  const QuantFormat f = p.format;
#if defined(__AVX2__)
  if (p.rounding == math::QuantRounding::kNearest && bs.finite) {
    if (f == QuantFormat::kFp16 || f == QuantFormat::kBf16) {
      StoreIoBlock(t, values, n, f == QuantFormat::kFp16 ? QuantIoType::kFloat16 : QuantIoType::kBFloat16);
      return;
    }
    if (f == QuantFormat::kFp8E4M3 || f == QuantFormat::kFp8E5M2) {
      const __m256 inv = _mm256_set1_ps(bs.inv);
      for (; i + 8 <= n; i += 8) {
        const __m256 y = _mm256_mul_ps(_mm256_loadu_ps(t + i), inv);
        StoreCodes8(values + i, f == QuantFormat::kFp8E4M3 ? FloatToFp8x8<QuantFormat::kFp8E4M3>(y)
                                                           : FloatToFp8x8<QuantFormat::kFp8E5M2>(y));
      }
    }
    if (f == QuantFormat::kInt8 || f == QuantFormat::kInt4) {
      const __m256 inv = _mm256_set1_ps(bs.inv);
      const __m256 hi = _mm256_set1_ps(math::QuantMaxCode(f));
      const __m256 lo = _mm256_set1_ps(-math::QuantMaxCode(f));
      // Clamp before converting, as math::QuantizeValue does; cvtps2dq rounds to nearest even.
      auto codes8 = [&](size_t at) {
        const __m256 y = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_loadu_ps(t + at), inv), lo), hi);
        const __m256i q = _mm256_cvtps_epi32(y);
        return _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));  // 8 x int16
      };
      if (f == QuantFormat::kInt8) {
        for (; i + 8 <= n; i += 8) {
          const __m128i q16 = codes8(i);
          _mm_storel_epi64(reinterpret_cast<__m128i*>(values + i), _mm_packs_epi16(q16, q16));
        }
      } else {
        const __m128i low4 = _mm_set1_epi16(0x000f);
        const __m128i high4 = _mm_set1_epi16(0x00f0);
        for (; i + 16 <= n; i += 16) {
          // 16 codes as bytes in element order; each 16-bit lane then holds an (even, odd) pair to pack.
          const __m128i pairs = _mm_packs_epi16(codes8(i), codes8(i + 8));
          const __m128i packed =
              _mm_or_si128(_mm_and_si128(pairs, low4), _mm_and_si128(_mm_srli_epi16(pairs, 4), high4));
          _mm_storel_epi64(reinterpret_cast<__m128i*>(values + i / 2), _mm_packus_epi16(packed, packed));
        }
      }
    }
  }
#endif
  for (; i < n; i += 2) {
    const bool two = i + 1 < n;
    const uint32_t c0 = math::QuantizeValue(t[i], bs, p, index0 + i);
    const uint32_t c1 = two ? math::QuantizeValue(t[i + 1], bs, p, index0 + i + 1) : 0u;
    math::StoreCodePair(values, i, f, c0, c1, two);
  }
}

// The scales of up to kGroupBlocks blocks. With fp32 scales their two divisions (absmax / max code, then
// 1 / scale) run 8 lanes at once: one block after another, each block waited on its divisions' latency (28% of
// RunStep's own samples at int4:32 under perf). IEEE division rounds the same in every lane, so the results are
// math::MakeBlockScale's; the blocks that function treats apart (inf or NaN, tiny) still go through it.
constexpr size_t kGroupBlocks = 8;

inline void MakeBlockScales(const uint32_t* absmax, size_t n, const QuantParams& p, math::BlockScale* bs) {
#if defined(__AVX2__)
  if (p.scale == math::QuantScale::kFp32 && n > 1) {
    alignas(32) uint32_t lanes[kGroupBlocks];
    for (size_t k = 0; k < kGroupBlocks; ++k) lanes[k] = k < n ? absmax[k] : 0x3f800000u;  // 1.0f: a harmless lane
    const __m256 scale = _mm256_div_ps(_mm256_load_ps(reinterpret_cast<const float*>(lanes)),
                                       _mm256_set1_ps(math::QuantMaxCode(p.format)));
    const __m256 inv = _mm256_div_ps(_mm256_set1_ps(1.0f), scale);
    alignas(32) float scales[kGroupBlocks], invs[kGroupBlocks];
    _mm256_store_ps(scales, scale);
    _mm256_store_ps(invs, inv);
    for (size_t k = 0; k < n; ++k) {
      if (absmax[k] >= 0x7f800000u || absmax[k] < math::kQuantTinyAbsmaxBits)
        bs[k] = math::MakeBlockScale(absmax[k], p);
      else
        bs[k] = math::BlockScale{scales[k], invs[k], math::FloatBits(scales[k]), true};
    }
    return;
  }
#endif
  for (size_t k = 0; k < n; ++k) bs[k] = math::MakeBlockScale(absmax[k], p);
}

// Blocks are taken a group at a time (as many as fit the sum buffer, up to kGroupBlocks): the group's sums
// first, then its scales together, then its codes.
void RunStep(const QuantParams& p, const QuantStep& s) {
  alignas(64) float sum[math::kQuantMaxBlock];
  alignas(64) float deq[math::kQuantMaxBlock];
  const math::QuantLayout layout = math::QuantLayoutOf(p, s.count);
  const bool scaled = math::QuantHasScale(p.format);
  if (s.out != nullptr) {
    // The padding between scales and values is part of the bytes every rank compares: zero, never stale.
    const size_t scale_end = layout.blocks * math::QuantScaleBytes(p);
    std::memset(s.out + scale_end, 0, layout.values_offset - scale_end);
  }
  const size_t group = math::kQuantMaxBlock / p.block < kGroupBlocks ? math::kQuantMaxBlock / p.block : kGroupBlocks;
  const size_t deq_width = s.deq_type == QuantIoType::kFloat32 ? 4 : 2;
  for (size_t g = 0; g < layout.blocks; g += group) {
    const size_t blocks = layout.blocks - g < group ? layout.blocks - g : group;
    const size_t g0 = g * p.block;  // the group's first element; its elements are contiguous
    const size_t gn = s.count - g0 < blocks * p.block ? s.count - g0 : blocks * p.block;
    auto blockLen = [&](size_t e) { return gn - e < p.block ? gn - e : p.block; };  // the block at group offset e
    bool first = true;
    if (s.acc_in != nullptr) {
      LoadIoBlock(sum, s.acc_in + g0, gn, QuantIoType::kFloat32, first);
      first = false;
    }
    if (s.local != nullptr) {
      const size_t width = s.local_type == QuantIoType::kFloat32 ? 4 : 2;
      LoadIoBlock(sum, static_cast<const uint8_t*>(s.local) + g0 * width, gn, s.local_type, first);
      first = false;
    }
    for (const uint8_t* in : s.in) {
      if (in == nullptr) continue;
      for (size_t k = 0; k < blocks; ++k) {
        const size_t e = k * p.block;
        const size_t n = blockLen(e);
        const float scale = scaled ? math::LoadScale(in, g + k, p.scale) : 1.0f;
        AddDequantBlock(sum + e, in + layout.values_offset + math::QuantValueBytes(p.format, g0 + e), scale, n,
                        p.format, first);
      }
      first = false;
    }
    if (s.divisor > 1) {
      const float d = static_cast<float>(s.divisor);
      for (size_t i = 0; i < gn; ++i) sum[i] = sum[i] / d;
    }
    if (s.acc_out != nullptr) HostCopyVector(s.acc_out + g0, sum, gn * sizeof(float));
    if (s.out == nullptr) {
      if (s.deq_out != nullptr) StoreIoBlock(sum, static_cast<uint8_t*>(s.deq_out) + g0 * deq_width, gn, s.deq_type);
      continue;
    }
    math::BlockScale bs[kGroupBlocks];
    for (size_t k = 0; k < blocks; ++k) bs[k] = math::BlockScale{1.0f, 1.0f, 0u, true};
    if (scaled) {
      uint32_t absmax[kGroupBlocks];
      for (size_t k = 0; k < blocks; ++k) {
        const size_t e = k * p.block;
        absmax[k] = AbsMaxBlock(sum + e, blockLen(e));
      }
      MakeBlockScales(absmax, blocks, p, bs);
      for (size_t k = 0; k < blocks; ++k) math::StoreScale(s.out, g + k, p.scale, bs[k].stored);
    }
    for (size_t k = 0; k < blocks; ++k) {
      const size_t e = k * p.block;
      const size_t n = blockLen(e);
      uint8_t* codes = s.out + layout.values_offset + math::QuantValueBytes(p.format, g0 + e);
      QuantizeBlock(sum + e, n, bs[k], p, s.index_base + g0 + e, codes);
      if (s.deq_out != nullptr) AddDequantBlock(deq + e, codes, bs[k].scale, n, p.format, true);
    }
    if (s.deq_out != nullptr) StoreIoBlock(deq, static_cast<uint8_t*>(s.deq_out) + g0 * deq_width, gn, s.deq_type);
  }
}

}  // namespace STRATA_QUANT_ISA_NAMESPACE
}  // namespace strata

#endif  // STRATA_QUANT_ISA_NAMESPACE
