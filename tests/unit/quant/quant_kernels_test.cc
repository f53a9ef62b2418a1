// The host quantization kernels on every ISA the CPU has, against the reference quantizer (quant_ref.h, double
// precision from the spec) and against the scalar build bit for bit: all formats, block sizes from 32 to 4096,
// odd lengths and partial last blocks, every source combination of the fused step, special values, and
// stochastic rounding (reproducible, unbiased).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "exec/host_reduce.h"
#include "exec/quant/host_quant.h"
#include "exec/quant/quant_spec.h"
#include "unit/quant/quant_ref.h"

namespace strata {
namespace {

using math::QuantFormat;
using math::QuantIoType;
using math::QuantParams;
using math::QuantRounding;
using math::QuantScale;

const QuantFormat kAllFormats[] = {QuantFormat::kBf16,    QuantFormat::kFp16, QuantFormat::kFp8E4M3,
                                   QuantFormat::kFp8E5M2, QuantFormat::kInt8, QuantFormat::kInt4};
const char* const kFormatNames[] = {"bf16", "fp16", "fp8e4m3", "fp8e5m2", "int8", "int4"};
const uint32_t kBlocks[] = {32, 64, 96, 128, 1024, 4096};

std::string Name(const QuantParams& p) {
  return std::string(kFormatNames[static_cast<int>(p.format)]) + ":" + std::to_string(p.block) +
         (p.scale == QuantScale::kFp16 ? ":fp16" : ":fp32");
}

// Restores the best ISA when a test that forced another ends.
class IsaGuard {
 public:
  IsaGuard() : saved_(HostReduceIsa()) {}
  ~IsaGuard() { ForceHostReduceIsa(saved_); }

 private:
  SimdIsa saved_;
};

std::vector<SimdIsa> IsasHere() {
  std::vector<SimdIsa> isas;
  IsaGuard guard;
  for (SimdIsa isa : {SimdIsa::Scalar, SimdIsa::Avx2, SimdIsa::Avx512}) {
    if (ForceHostReduceIsa(isa)) isas.push_back(isa);
  }
  return isas;
}

// Gaussian values with a per-block spread of magnitudes (1e-3 to 1e3), so scales differ block to block.
std::vector<float> Gaussian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_real_distribution<float> mag(-3.0f, 3.0f);
  std::vector<float> x(n);
  float m = 1.0f;
  for (size_t i = 0; i < n; ++i) {
    if (i % 32 == 0) m = std::pow(10.0f, mag(rng));
    x[i] = g(rng) * m;
  }
  return x;
}

std::vector<uint8_t> Quantize(const QuantParams& p, const std::vector<float>& x, uint64_t index_base = 0) {
  std::vector<uint8_t> out(QuantEncodedBytes(p, x.size()) + 1, 0xa5);  // one guard byte
  HostQuantize(p, x.data(), QuantIoType::kFloat32, x.size(), index_base, out.data());
  EXPECT_EQ(out.back(), 0xa5) << "wrote past the encoded size";
  out.pop_back();
  return out;
}

QuantParams Params(QuantFormat f, uint32_t block, QuantScale s = QuantScale::kFp32,
                   QuantRounding r = QuantRounding::kNearest, uint64_t seed = 0) {
  return QuantParams{f, s, r, block, seed};
}

TEST(QuantLayout, EncodedBytesMatchesTheDocumentedLayout) {
  for (QuantFormat f : kAllFormats) {
    for (uint32_t b : kBlocks) {
      for (QuantScale s : {QuantScale::kFp32, QuantScale::kFp16}) {
        const QuantParams p = Params(f, b, s);
        for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{b}, size_t{b} + 1, size_t{7} * b + 13}) {
          EXPECT_EQ(QuantEncodedBytes(p, n), quant_ref::EncodedBytes(p, n)) << Name(p) << " n=" << n;
        }
      }
    }
  }
  // Hand-computed: int8 block 128 fp32 scale, 1024 elements: 8 scales (32 bytes) + 1024 codes.
  EXPECT_EQ(QuantEncodedBytes(Params(QuantFormat::kInt8, 128), 1024), 32u + 1024u);
  // int4 block 32 fp16 scale, 33 elements: 2 scales (4 bytes, padded to 16) + 17 bytes.
  EXPECT_EQ(QuantEncodedBytes(Params(QuantFormat::kInt4, 32, QuantScale::kFp16), 33), 16u + 17u);
  EXPECT_EQ(QuantEncodedBytes(Params(QuantFormat::kBf16, 128), 5), 10u);
}

TEST(QuantLayout, BlockElementsFittingIsTheLargestThatFits) {
  for (QuantFormat f : kAllFormats) {
    for (uint32_t b : {32u, 128u, 4096u}) {
      const QuantParams p = Params(f, b, QuantScale::kFp16);
      for (size_t bytes : {size_t{0}, size_t{15}, size_t{4096}, size_t{128} << 10, size_t{1} << 20}) {
        const size_t n = QuantBlockElementsFitting(p, bytes);
        EXPECT_EQ(n % b, 0u);
        EXPECT_LE(QuantEncodedBytes(p, n), bytes) << Name(p) << " bytes=" << bytes;
        EXPECT_GT(QuantEncodedBytes(p, n + b), bytes) << Name(p) << " bytes=" << bytes;
      }
    }
  }
}

// Every ISA against the reference, every format, block size and scale format, odd lengths included.
TEST(QuantKernels, QuantizeMatchesReferenceOnEveryIsa) {
  IsaGuard guard;
  for (SimdIsa isa : IsasHere()) {
    ASSERT_TRUE(ForceHostReduceIsa(isa));
    for (QuantFormat f : kAllFormats) {
      for (uint32_t b : kBlocks) {
        for (QuantScale s : {QuantScale::kFp32, QuantScale::kFp16}) {
          const QuantParams p = Params(f, b, s);
          for (size_t n : {size_t{1}, size_t{17}, size_t{b} - 1, size_t{3} * b + 17}) {
            const std::vector<float> x = Gaussian(n, static_cast<uint32_t>(n * 31 + b));
            const std::vector<uint8_t> got = Quantize(p, x);
            const std::vector<uint8_t> want = quant_ref::Encode(p, x.data(), n);
            ASSERT_EQ(got, want) << SimdIsaName(isa) << " " << Name(p) << " n=" << n;
            std::vector<float> deq(n + 1, -7.0f);
            HostDequantize(p, got.data(), n, deq.data(), QuantIoType::kFloat32);
            ASSERT_EQ(deq[n], -7.0f) << "wrote past the end";
            const std::vector<float> ref = quant_ref::Decode(p, want.data(), n);
            ASSERT_EQ(0, std::memcmp(deq.data(), ref.data(), n * 4)) << SimdIsaName(isa) << " " << Name(p);
          }
        }
      }
    }
  }
  if (!ForceHostReduceIsa(SimdIsa::Avx512)) {
    std::printf("note: this CPU has no AVX-512; the AVX-512 build was not run\n");
  }
}

// The fused step with each combination of sources and destinations, against a reference built from its
// definition (float sums in the documented order, then the reference quantizer), and bit-identical across ISAs.
TEST(QuantKernels, FusedStepMatchesReferenceAndScalar) {
  IsaGuard guard;
  const std::vector<SimdIsa> isas = IsasHere();
  const QuantIoType io_types[] = {QuantIoType::kFloat32, QuantIoType::kFloat16, QuantIoType::kBFloat16};
  int cases = 0;
  for (QuantFormat f : kAllFormats) {
    for (uint32_t b : {32u, 96u, 128u, 4096u}) {
      const QuantParams p = Params(f, b, f == QuantFormat::kInt4 ? QuantScale::kFp16 : QuantScale::kFp32);
      const size_t n = 2 * b + 37;
      const std::vector<float> acc = Gaussian(n, 1), local_f = Gaussian(n, 2);
      const std::vector<uint8_t> in0 = quant_ref::Encode(p, Gaussian(n, 3).data(), n);
      const std::vector<uint8_t> in1 = quant_ref::Encode(p, Gaussian(n, 4).data(), n);
      const std::vector<float> d0 = quant_ref::Decode(p, in0.data(), n), d1 = quant_ref::Decode(p, in1.data(), n);
      for (QuantIoType lt : io_types) {
        // The local input in its own type, and the float values it holds.
        std::vector<uint8_t> local(n * 4);
        std::vector<float> local_v(n);
        for (size_t i = 0; i < n; ++i) {
          math::StoreIo(local.data(), i, lt, local_f[i]);
          local_v[i] = math::LoadIo(local.data(), i, lt);
        }
        for (int mask = 1; mask < 16; ++mask) {
          for (int divisor : {1, 3}) {
            const bool use_acc = mask & 1, use_local = mask & 2, use_in0 = mask & 4, use_in1 = mask & 8;
            std::vector<float> sum(n);
            for (size_t i = 0; i < n; ++i) {
              bool first = true;
              float s = 0;
              auto add = [&](float v) {
                s = first ? v : s + v;
                first = false;
              };
              if (use_acc) add(acc[i]);
              if (use_local) add(local_v[i]);
              if (use_in0) add(d0[i]);
              if (use_in1) add(d1[i]);
              sum[i] = divisor > 1 ? s / static_cast<float>(divisor) : s;
            }
            const std::vector<uint8_t> want = quant_ref::Encode(p, sum.data(), n);
            const std::vector<float> want_deq = quant_ref::Decode(p, want.data(), n);
            std::vector<uint8_t> first_out;
            for (SimdIsa isa : isas) {
              ASSERT_TRUE(ForceHostReduceIsa(isa));
              math::QuantStep st{};
              st.count = n;
              st.acc_in = use_acc ? acc.data() : nullptr;
              st.local = use_local ? local.data() : nullptr;
              st.local_type = lt;
              st.in[0] = use_in0 ? in0.data() : nullptr;
              st.in[1] = use_in1 ? in1.data() : nullptr;
              std::vector<float> acc_out(n);
              std::vector<uint8_t> out(want.size());
              std::vector<float> deq(n);
              st.acc_out = acc_out.data();
              st.out = out.data();
              st.deq_out = deq.data();
              st.deq_type = QuantIoType::kFloat32;
              st.divisor = divisor;
              HostQuantStep(p, st);
              const std::string what = std::string(SimdIsaName(isa)) + " " + Name(p) + " mask=" +
                                       std::to_string(mask) + " local_type=" + std::to_string(static_cast<int>(lt));
              ASSERT_EQ(0, std::memcmp(acc_out.data(), sum.data(), n * 4)) << what;
              ASSERT_EQ(out, want) << what;
              ASSERT_EQ(0, std::memcmp(deq.data(), want_deq.data(), n * 4)) << what;
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 1000);
}

// The dequantized output in fp16 and bf16, and a local input aliased with the output (in place).
TEST(QuantKernels, NarrowOutputsAndInPlace) {
  IsaGuard guard;
  for (SimdIsa isa : IsasHere()) {
    ASSERT_TRUE(ForceHostReduceIsa(isa));
    for (QuantIoType t : {QuantIoType::kFloat16, QuantIoType::kBFloat16}) {
      const QuantParams p = Params(QuantFormat::kInt8, 64);
      const size_t n = 1000;
      const std::vector<float> x = Gaussian(n, 9);
      std::vector<uint8_t> buf(2 * n);
      for (size_t i = 0; i < n; ++i) math::StoreIo(buf.data(), i, t, x[i]);
      std::vector<float> xv(n);
      for (size_t i = 0; i < n; ++i) xv[i] = math::LoadIo(buf.data(), i, t);
      const std::vector<uint8_t> want = quant_ref::Encode(p, xv.data(), n);
      const std::vector<float> want_deq = quant_ref::Decode(p, want.data(), n);
      std::vector<uint8_t> out(want.size());
      math::QuantStep st{};
      st.count = n;
      st.local = buf.data();
      st.local_type = t;
      st.out = out.data();
      st.deq_out = buf.data();  // in place
      st.deq_type = t;
      HostQuantStep(p, st);
      ASSERT_EQ(out, want) << SimdIsaName(isa);
      for (size_t i = 0; i < n; ++i) {
        const double r = ref::RoundToFormat(want_deq[i], t == QuantIoType::kFloat16 ? ref::kFp16 : ref::kBf16);
        ASSERT_EQ(math::LoadIo(buf.data(), i, t), r) << SimdIsaName(isa) << " element " << i;
      }
    }
  }
}

TEST(QuantKernels, SpecialValues) {
  IsaGuard guard;
  for (SimdIsa isa : IsasHere()) {
    ASSERT_TRUE(ForceHostReduceIsa(isa));
    for (QuantFormat f : kAllFormats) {
      const QuantParams p = Params(f, 32);
      std::vector<float> x(96, 0.0f);                        // block 0: zeros
      for (size_t i = 32; i < 64; ++i) x[i] = 1.0f + i;      // block 1: finite
      x[40] = std::numeric_limits<float>::infinity();        // ... with an inf
      for (size_t i = 64; i < 96; ++i) x[i] = 1e-35f * static_cast<float>(static_cast<int>(i) - 80);  // below 2^-96
      const std::vector<uint8_t> q = Quantize(p, x);
      std::vector<float> d(96);
      HostDequantize(p, q.data(), 96, d.data(), QuantIoType::kFloat32);
      for (size_t i = 0; i < 32; ++i) EXPECT_EQ(d[i], 0.0f) << kFormatNames[static_cast<int>(f)];
      if (math::QuantHasScale(f)) {
        for (size_t i = 32; i < 64; ++i) EXPECT_TRUE(std::isnan(d[i])) << kFormatNames[static_cast<int>(f)] << i;
        for (size_t i = 64; i < 96; ++i) EXPECT_EQ(d[i], 0.0f) << kFormatNames[static_cast<int>(f)];
      } else {
        EXPECT_TRUE(std::isinf(d[40]));
      }
      EXPECT_EQ(q, quant_ref::Encode(p, x.data(), x.size())) << SimdIsaName(isa) << kFormatNames[static_cast<int>(f)];
    }
  }
}

// The vector conversions against the scalar build on the patterns where they could differ: bf16 over every upper
// half with the rounding-critical lower halves (ties, NaN, inf, overflow to inf); fp8 over every code's value,
// the midpoints between neighbouring codes (ties) and the floats either side of them, subnormals and values
// too small to keep, in blocks whose scale is exactly 1; and every bf16 and fp8 code decoded.
std::vector<uint8_t> Encoded(const QuantParams& p, const std::vector<float>& x) {
  std::vector<uint8_t> out(QuantEncodedBytes(p, x.size()));
  HostQuantize(p, x.data(), QuantIoType::kFloat32, x.size(), 0, out.data());
  return out;
}

std::vector<uint32_t> DecodedBits(const QuantParams& p, const std::vector<uint8_t>& in, size_t n) {
  std::vector<float> d(n);
  HostDequantize(p, in.data(), n, d.data(), QuantIoType::kFloat32);
  std::vector<uint32_t> bits(n);
  std::memcpy(bits.data(), d.data(), n * sizeof(float));
  return bits;
}

std::vector<float> Fp8CriticalValues(QuantFormat f) {
  const float max = f == QuantFormat::kFp8E4M3 ? 448.0f : 57344.0f;
  auto value = [f](uint32_t c) {
    return f == QuantFormat::kFp8E4M3 ? math::Fp8E4M3ToFloat(static_cast<uint8_t>(c))
                                      : math::Fp8E5M2ToFloat(static_cast<uint8_t>(c));
  };
  const uint32_t top = f == QuantFormat::kFp8E4M3 ? 0x7eu : 0x7bu;
  std::vector<float> v = {0.0f, 1e-30f, 1e-40f, std::numeric_limits<float>::denorm_min()};
  for (uint32_t c = 0; c <= top; ++c) {
    v.push_back(value(c));
    if (c < top) {
      const float mid = (value(c) + value(c + 1)) / 2;  // exact: one more mantissa bit
      v.insert(v.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, max)});
    }
  }
  const size_t positive = v.size();
  for (size_t i = 0; i < positive; ++i) v.push_back(-v[i]);
  // Blocks of 128 led by the format's largest value, so that every block's scale is 1.
  std::vector<float> x;
  for (size_t i = 0; i < v.size(); ++i) {
    if (x.size() % 128 == 0) x.push_back(max);
    x.push_back(v[i]);
  }
  return x;
}

TEST(QuantKernels, VectorConversionsMatchTheScalarBuildOnCriticalPatterns) {
  IsaGuard guard;
  std::vector<float> bf16_inputs;
  for (uint32_t hi = 0; hi < 0x10000u; ++hi)
    for (uint32_t lo : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      const uint32_t bits = hi << 16 | lo;
      float f;
      std::memcpy(&f, &bits, 4);
      bf16_inputs.push_back(f);
    }
  std::vector<uint8_t> bf16_codes(2 * 0x10000);
  for (uint32_t c = 0; c < 0x10000u; ++c) std::memcpy(&bf16_codes[2 * c], &c, 2);
  const QuantParams bf16 = Params(QuantFormat::kBf16, 128);
  const QuantParams e4m3 = Params(QuantFormat::kFp8E4M3, 128), e5m2 = Params(QuantFormat::kFp8E5M2, 128);
  const std::vector<float> e4m3_inputs = Fp8CriticalValues(QuantFormat::kFp8E4M3);
  const std::vector<float> e5m2_inputs = Fp8CriticalValues(QuantFormat::kFp8E5M2);
  // Every fp8 code, in two blocks with scales 1 and 0.75.
  std::vector<uint8_t> fp8_codes(QuantEncodedBytes(e4m3, 256), 0);
  const float scales[2] = {1.0f, 0.75f};
  std::memcpy(fp8_codes.data(), scales, sizeof scales);
  const size_t values = fp8_codes.size() - 256;
  for (uint32_t c = 0; c < 256; ++c) fp8_codes[values + c] = static_cast<uint8_t>(c);

  ASSERT_TRUE(ForceHostReduceIsa(SimdIsa::Scalar));
  const std::vector<uint8_t> want_bf16 = Encoded(bf16, bf16_inputs);
  const std::vector<uint32_t> want_bf16_deq = DecodedBits(bf16, bf16_codes, 0x10000);
  const std::vector<uint8_t> want_e4m3 = Encoded(e4m3, e4m3_inputs), want_e5m2 = Encoded(e5m2, e5m2_inputs);
  const std::vector<uint32_t> want_e4m3_deq = DecodedBits(e4m3, fp8_codes, 256);
  const std::vector<uint32_t> want_e5m2_deq = DecodedBits(e5m2, fp8_codes, 256);
  // The scalar build against the reference quantizer on the same patterns (NaN aside, whose payload bits the
  // reference does not define; the vector builds' NaNs are checked against the scalar build's below).
  EXPECT_EQ(want_e4m3, quant_ref::Encode(e4m3, e4m3_inputs.data(), e4m3_inputs.size()));
  EXPECT_EQ(want_e5m2, quant_ref::Encode(e5m2, e5m2_inputs.data(), e5m2_inputs.size()));
  std::vector<float> bf16_numbers;
  for (float f : bf16_inputs)
    if (!std::isnan(f)) bf16_numbers.push_back(f);
  EXPECT_EQ(Encoded(bf16, bf16_numbers), quant_ref::Encode(bf16, bf16_numbers.data(), bf16_numbers.size()));
  for (const auto& [p, want] : {std::pair{e4m3, &want_e4m3_deq}, std::pair{e5m2, &want_e5m2_deq}}) {
    const std::vector<float> ref = quant_ref::Decode(p, fp8_codes.data(), 256);
    for (size_t c = 0; c < 256; ++c) {
      float got;
      std::memcpy(&got, &(*want)[c], 4);
      if (std::isnan(ref[c]))
        EXPECT_TRUE(std::isnan(got)) << "code " << c;
      else
        EXPECT_EQ(got, ref[c]) << "code " << c;
    }
  }
  // The inputs reach every finite code of both formats.
  for (const auto& [want, n, nan] : {std::tuple{&want_e4m3, e4m3_inputs.size(), 0x7fu},
                                     std::tuple{&want_e5m2, e5m2_inputs.size(), 0x7cu}}) {
    std::vector<bool> seen(256, false);
    for (size_t i = want->size() - n; i < want->size(); ++i) seen[(*want)[i]] = true;
    for (uint32_t c = 0; c < 256; ++c) EXPECT_EQ(seen[c], (c & 0x7fu) < nan) << "code " << c;
  }
  for (SimdIsa isa : IsasHere()) {
    ASSERT_TRUE(ForceHostReduceIsa(isa));
    EXPECT_EQ(Encoded(bf16, bf16_inputs), want_bf16) << SimdIsaName(isa);
    EXPECT_EQ(DecodedBits(bf16, bf16_codes, 0x10000), want_bf16_deq) << SimdIsaName(isa);
    EXPECT_EQ(Encoded(e4m3, e4m3_inputs), want_e4m3) << SimdIsaName(isa);
    EXPECT_EQ(Encoded(e5m2, e5m2_inputs), want_e5m2) << SimdIsaName(isa);
    EXPECT_EQ(DecodedBits(e4m3, fp8_codes, 256), want_e4m3_deq) << SimdIsaName(isa);
    EXPECT_EQ(DecodedBits(e5m2, fp8_codes, 256), want_e5m2_deq) << SimdIsaName(isa);
  }
}

// fp16 scales are rounded up, so the block's largest value still maps inside the code range.
TEST(QuantKernels, Fp16ScaleNeverClipsTheAbsmax) {
  const QuantParams p = Params(QuantFormat::kInt8, 32, QuantScale::kFp16);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(1e-3f, 1e3f);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<float> x(32, 0.0f);
    x[trial % 32] = (trial & 1 ? -1.0f : 1.0f) * u(rng);
    const std::vector<uint8_t> q = Quantize(p, x);
    std::vector<float> d(32);
    HostDequantize(p, q.data(), 32, d.data(), QuantIoType::kFloat32);
    const double err = std::fabs(static_cast<double>(d[trial % 32]) - x[trial % 32]);
    uint16_t h;
    std::memcpy(&h, q.data(), 2);
    EXPECT_LE(err, 0.5 * ref::Decode(h, ref::kFp16) * 1.0001) << x[trial % 32];
  }
}

TEST(QuantStochastic, SameSeedSameBytesOtherSeedOtherBytes) {
  for (QuantFormat f : kAllFormats) {
    const QuantParams a = Params(f, 64, QuantScale::kFp32, QuantRounding::kStochastic, 42);
    QuantParams b = a;
    b.seed = 43;
    const std::vector<float> x = Gaussian(4096 + 7, 11);
    EXPECT_EQ(Quantize(a, x), Quantize(a, x));
    EXPECT_NE(Quantize(a, x), Quantize(b, x));
    // The bits depend on the element's tensor index, not on where a range starts: quantizing the second
    // half on its own (index_base = its offset) gives the second half's codes.
    const size_t half = 2048;
    const std::vector<float> tail(x.begin() + half, x.end());
    const std::vector<uint8_t> whole = Quantize(a, x), part = Quantize(a, tail, half);
    std::vector<float> dw(x.size()), dp(tail.size());
    HostDequantize(a, whole.data(), x.size(), dw.data(), QuantIoType::kFloat32);
    HostDequantize(a, part.data(), tail.size(), dp.data(), QuantIoType::kFloat32);
    EXPECT_EQ(0, std::memcmp(dw.data() + half, dp.data(), tail.size() * 4)) << kFormatNames[static_cast<int>(f)];
  }
}

// The spacing of the codes around x, in x's units: the scale for integer codes, the format's ulp (times the
// scale) for float codes. Stochastic rounding moves x to one of the two codes around it.
double StepAt(const QuantParams& p, const uint8_t* encoded, size_t i, float x) {
  if (!math::QuantHasScale(p.format)) return ref::Ulp(x, *quant_ref::FloatFormatOf(p.format));
  float scale;
  std::memcpy(&scale, encoded + 4 * (i / p.block), 4);
  if (p.format == QuantFormat::kInt4 || p.format == QuantFormat::kInt8) return scale;
  const double y = static_cast<float>(static_cast<double>(x) * static_cast<float>(1.0 / scale));
  return ref::Ulp(y, *quant_ref::FloatFormatOf(p.format)) * scale;
}

// Each integer code is one of the two values around the scaled input, and across seeds the rounding is
// unbiased. The statistic: for element i, r_i = mean error / sigma_i over 1000 seeds, where sigma_i = step / sqrt(6)
// is the rms error of unbiased stochastic rounding averaged over where x falls between two codes (the sample
// rms is no denominator: an element a hair above a code rounds up once in a million calls, so over 1000 calls
// its error is the same every time and mean/rms = 1 although the rounding is unbiased). Unbiased rounding gives
// r_i with standard deviation at most 1.22 / sqrt(1000) = 0.039; the test asks rms_i(r_i) <= 0.05 (expected
// 0.032) and every |r_i| * sqrt(1000) <= 8. Round to nearest fails both by a factor of ten or more (checked).
struct BiasStats {
  double rms_ratio;
  double worst_z;
};

BiasStats MeasureBias(const QuantParams& base, const std::vector<float>& x, int calls) {
  const size_t n = x.size();
  std::vector<double> mean(n, 0.0);
  QuantParams p = base;
  std::vector<uint8_t> q;
  for (int c = 0; c < calls; ++c) {
    p.seed = math::QuantDeriveSeed(7, static_cast<uint64_t>(c), 0);
    q = Quantize(p, x);
    std::vector<float> d(n);
    HostDequantize(p, q.data(), n, d.data(), QuantIoType::kFloat32);
    for (size_t i = 0; i < n; ++i) {
      const double e = static_cast<double>(d[i]) - x[i];
      if (p.format == QuantFormat::kInt4 || p.format == QuantFormat::kInt8) {
        EXPECT_LT(std::fabs(e), StepAt(p, q.data(), i, x[i]) * 1.000001) << "further than one step from x";
      }
      mean[i] += e / calls;
    }
  }
  double sum_r2 = 0, worst_z = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = mean[i] / (StepAt(p, q.data(), i, x[i]) / std::sqrt(6.0));
    sum_r2 += r * r;
    worst_z = std::max(worst_z, std::fabs(r) * std::sqrt(static_cast<double>(calls)));
  }
  return BiasStats{std::sqrt(sum_r2 / n), worst_z};
}

TEST(QuantStochastic, UnbiasedOverSeeds) {
  const std::vector<float> x = Gaussian(256, 17);
  for (QuantFormat f : kAllFormats) {
    const BiasStats s = MeasureBias(Params(f, 32, QuantScale::kFp32, QuantRounding::kStochastic), x, 1000);
    EXPECT_LE(s.rms_ratio, 0.05) << kFormatNames[static_cast<int>(f)];
    EXPECT_LE(s.worst_z, 8.0) << kFormatNames[static_cast<int>(f)];
    std::printf("%-8s stochastic: rms of mean/sigma %.4f, worst z %.2f\n", kFormatNames[static_cast<int>(f)],
                s.rms_ratio, s.worst_z);
  }
  // The statistic can fail: round to nearest is biased per element.
  const BiasStats nearest = MeasureBias(Params(QuantFormat::kInt8, 32), x, 50);
  EXPECT_GT(nearest.rms_ratio, 0.5);
}

}  // namespace
}  // namespace strata
