// The host quantization loops, written once and compiled once per ISA.
//
// Included without STRATA_QUANT_ISA_NAMESPACE (by the dispatcher) this header only declares each ISA's
// RunStep. host_quant_{scalar,avx2,avx512}.cc define the namespace first and get the loops, as
// src/exec/reduce does, so copies built with different -m flags never merge at link time.
//
// A step works block by block: the block's sum is built in an L1-resident fp32 buffer, then its absmax,
// scale and codes are computed from that buffer; memory sees one pass. Round-to-nearest int8, int4 and fp16
// have AVX2 intrinsics (the AVX-512 build uses the same 256-bit code, plus whatever GCC vectorizes wider);
// fp8 and stochastic rounding run the per-element math in every build.
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

#if defined(__AVX2__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#endif

#include <cstring>

namespace strata {
namespace STRATA_QUANT_ISA_NAMESPACE {

using math::QuantFormat;
using math::QuantIoType;
using math::QuantParams;
using math::QuantStep;

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
  }
#endif
  if (type == QuantIoType::kFloat32) {
    const float* f = static_cast<const float*>(src);
    if (first) {
      std::memcpy(t, f, n * sizeof(float));
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
    std::memcpy(dst, t, n * sizeof(float));
    return;
  }
#if defined(__AVX2__)
  if (type == QuantIoType::kFloat16) {
    for (; i + 8 <= n; i += 8) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint16_t*>(dst) + i),
                       _mm256_cvtps_ph(_mm256_loadu_ps(t + i), _MM_FROUND_TO_NEAREST_INT));
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
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), vm);
  for (uint32_t v : lanes) m = v > m ? v : m;
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
    if (f == QuantFormat::kFp16) {
      StoreIoBlock(t, values, n, QuantIoType::kFloat16);
      return;
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
  for (size_t b = 0; b < layout.blocks; ++b) {
    const size_t e0 = b * p.block;
    const size_t n = s.count - e0 < p.block ? s.count - e0 : p.block;
    const size_t code_offset = layout.values_offset + math::QuantValueBytes(p.format, e0);
    bool first = true;
    if (s.acc_in != nullptr) {
      LoadIoBlock(sum, s.acc_in + e0, n, QuantIoType::kFloat32, first);
      first = false;
    }
    if (s.local != nullptr) {
      const size_t width = s.local_type == QuantIoType::kFloat32 ? 4 : 2;
      LoadIoBlock(sum, static_cast<const uint8_t*>(s.local) + e0 * width, n, s.local_type, first);
      first = false;
    }
    for (const uint8_t* in : s.in) {
      if (in == nullptr) continue;
      const float scale = scaled ? math::LoadScale(in, b, p.scale) : 1.0f;
      AddDequantBlock(sum, in + code_offset, scale, n, p.format, first);
      first = false;
    }
    if (s.divisor > 1) {
      const float d = static_cast<float>(s.divisor);
      for (size_t i = 0; i < n; ++i) sum[i] = sum[i] / d;
    }
    if (s.acc_out != nullptr) std::memcpy(s.acc_out + e0, sum, n * sizeof(float));
    const size_t deq_width = s.deq_type == QuantIoType::kFloat32 ? 4 : 2;
    if (s.out != nullptr) {
      math::BlockScale bs{1.0f, 1.0f, 0u, true};
      if (scaled) {
        bs = math::MakeBlockScale(AbsMaxBlock(sum, n), p);
        math::StoreScale(s.out, b, p.scale, bs.stored);
      }
      QuantizeBlock(sum, n, bs, p, s.index_base + e0, s.out + code_offset);
      if (s.deq_out != nullptr) {
        AddDequantBlock(deq, s.out + code_offset, bs.scale, n, p.format, true);
        StoreIoBlock(deq, static_cast<uint8_t*>(s.deq_out) + e0 * deq_width, n, s.deq_type);
      }
    } else if (s.deq_out != nullptr) {
      StoreIoBlock(sum, static_cast<uint8_t*>(s.deq_out) + e0 * deq_width, n, s.deq_type);
    }
  }
}

}  // namespace STRATA_QUANT_ISA_NAMESPACE
}  // namespace strata

#endif  // STRATA_QUANT_ISA_NAMESPACE
