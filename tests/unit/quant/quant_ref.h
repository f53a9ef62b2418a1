// A reference block quantizer written from docs/QUANTIZATION.md, in double precision with one rounding to
// float where the spec says a float is computed; it shares no code with kernels/include/strata/quant_math.h
// (only the enums and the parameter struct), and the float formats come from support/ref_numerics.h.
// Round to nearest only: stochastic rounding is checked statistically.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "strata/quant_math.h"
#include "support/ref_numerics.h"

namespace strata {
namespace quant_ref {

using math::QuantFormat;
using math::QuantParams;

inline const ref::FloatFormat* FloatFormatOf(QuantFormat f) {
  switch (f) {
    case QuantFormat::kBf16:
      return &ref::kBf16;
    case QuantFormat::kFp16:
      return &ref::kFp16;
    case QuantFormat::kFp8E4M3:
      return &ref::kE4M3;
    case QuantFormat::kFp8E5M2:
      return &ref::kE5M2;
    default:
      return nullptr;
  }
}

inline bool Scaled(QuantFormat f) { return f != QuantFormat::kBf16 && f != QuantFormat::kFp16; }
inline double MaxCode(QuantFormat f) {
  switch (f) {
    case QuantFormat::kInt8:
      return 127;
    case QuantFormat::kInt4:
      return 7;
    default:
      return ref::MaxFinite(*FloatFormatOf(f));
  }
}
inline size_t ScaleBytes(const QuantParams& p) {
  return Scaled(p.format) ? (p.scale == math::QuantScale::kFp16 ? 2 : 4) : 0;
}
inline size_t Bits(QuantFormat f) {
  return f == QuantFormat::kBf16 || f == QuantFormat::kFp16 ? 16 : (f == QuantFormat::kInt4 ? 4 : 8);
}
inline size_t Blocks(const QuantParams& p, size_t n) { return (n + p.block - 1) / p.block; }
inline size_t ValuesOffset(const QuantParams& p, size_t n) { return (Blocks(p, n) * ScaleBytes(p) + 15) / 16 * 16; }
inline size_t EncodedBytes(const QuantParams& p, size_t n) {
  return n == 0 ? 0 : ValuesOffset(p, n) + (n * Bits(p.format) + 7) / 8;
}

inline float F(double v) { return static_cast<float>(v); }

// The block's scale as the decoder sees it; `finite` false for blocks holding inf or NaN.
inline double BlockScaleOf(const QuantParams& p, const float* x, size_t n, bool* finite) {
  double absmax = 0;
  *finite = true;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) *finite = false;
    absmax = std::max(absmax, std::fabs(static_cast<double>(x[i])));
  }
  if (!*finite) return std::numeric_limits<double>::quiet_NaN();
  if (absmax < std::ldexp(1.0, -96)) return 0;
  double s = F(absmax / MaxCode(p.format));
  if (p.scale == math::QuantScale::kFp16) {
    // The smallest fp16 not below s, at most 65504.
    double h = ref::RoundToFormat(s, ref::kFp16);
    if (h < s) h = ref::Decode(ref::Encode(h, ref::kFp16) + 1, ref::kFp16);
    s = std::min(h, 65504.0);
  }
  return s;
}

inline uint32_t EncodeScaleBits(const QuantParams& p, double s) {
  if (p.scale == math::QuantScale::kFp16) return static_cast<uint32_t>(ref::Encode(s, ref::kFp16));
  const float f = F(s);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return std::isnan(s) ? 0x7fc00000u : u;
}

inline uint32_t EncodeValue(const QuantParams& p, float x, double s, bool finite) {
  if (!Scaled(p.format)) return static_cast<uint32_t>(ref::Encode(x, *FloatFormatOf(p.format)));
  if (!finite) return 0;
  const double inv = s > 0 ? static_cast<double>(F(1.0 / s)) : 0.0;
  const double y = F(static_cast<double>(x) * inv);
  if (p.format == QuantFormat::kInt8 || p.format == QuantFormat::kInt4) {
    const double q = std::nearbyint(std::min(std::max(y, -MaxCode(p.format)), MaxCode(p.format)));
    return static_cast<uint32_t>(static_cast<int32_t>(q)) & (p.format == QuantFormat::kInt4 ? 0xfu : 0xffu);
  }
  return static_cast<uint32_t>(ref::Encode(y, *FloatFormatOf(p.format)));
}

inline std::vector<uint8_t> Encode(const QuantParams& p, const float* x, size_t n) {
  std::vector<uint8_t> out(EncodedBytes(p, n), 0);
  const size_t vo = ValuesOffset(p, n);
  for (size_t b = 0; b < Blocks(p, n); ++b) {
    const size_t e0 = b * p.block, m = std::min<size_t>(p.block, n - e0);
    bool finite = true;
    const double s = BlockScaleOf(p, x + e0, m, &finite);
    if (Scaled(p.format)) {
      const uint32_t sb = EncodeScaleBits(p, s);
      std::memcpy(out.data() + b * ScaleBytes(p), &sb, ScaleBytes(p));
    }
    for (size_t i = e0; i < e0 + m; ++i) {
      const uint32_t c = EncodeValue(p, x[i], s, finite);
      switch (Bits(p.format)) {
        case 16:
          std::memcpy(out.data() + vo + 2 * i, &c, 2);
          break;
        case 8:
          out[vo + i] = static_cast<uint8_t>(c);
          break;
        default:
          out[vo + i / 2] |= static_cast<uint8_t>(c << (4 * (i & 1)));
          break;
      }
    }
  }
  return out;
}

// The values an encoded range stands for, as floats.
inline std::vector<float> Decode(const QuantParams& p, const uint8_t* in, size_t n) {
  std::vector<float> out(n);
  const size_t vo = ValuesOffset(p, n);
  for (size_t i = 0; i < n; ++i) {
    const size_t b = i / p.block;
    double s = 1;
    if (Scaled(p.format)) {
      uint32_t sb = 0;
      std::memcpy(&sb, in + b * ScaleBytes(p), ScaleBytes(p));
      s = p.scale == math::QuantScale::kFp16 ? ref::Decode(sb, ref::kFp16) : static_cast<double>([&] {
        float f;
        std::memcpy(&f, &sb, 4);
        return f;
      }());
    }
    double v;
    switch (p.format) {
      case QuantFormat::kInt8:
        v = static_cast<int8_t>(in[vo + i]);
        break;
      case QuantFormat::kInt4: {
        const int c = (in[vo + i / 2] >> (4 * (i & 1))) & 0xf;
        v = c >= 8 ? c - 16 : c;
        break;
      }
      case QuantFormat::kBf16:
      case QuantFormat::kFp16: {
        uint16_t h;
        std::memcpy(&h, in + vo + 2 * i, 2);
        v = ref::Decode(h, *FloatFormatOf(p.format));
        break;
      }
      default:
        v = ref::Decode(in[vo + i], *FloatFormatOf(p.format));
        break;
    }
    out[i] = F(v * s);
  }
  return out;
}

}  // namespace quant_ref
}  // namespace strata
