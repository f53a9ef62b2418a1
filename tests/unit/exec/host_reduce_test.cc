// HostReduce / HostDivide / HostCopy on every ISA the CPU has, against a reference: inputs decoded to double
// (or to 128-bit integers), the op applied naively, the result rounded by support/ref_numerics.h, which shares
// no code with reduce_math.h. Also the fp16/bf16/fp8 conversions over all their bit patterns.
#include "exec/host_reduce.h"

#include <cpuid.h>
#include <gtest/gtest.h>
#include <immintrin.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "strata/reduce_math.h"
#include "support/ref_numerics.h"

namespace strata {
namespace {

bool SameValue(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want;
}

// ---- the data types, seen from the test ----

enum class Kind { kSigned, kUnsigned, kNarrow, kFloat32, kFloat64 };

struct TypeInfo {
  const char* name;
  const ref::FloatFormat* format;  // narrow floats only
  size_t size;
  strataDataType_t type;
  Kind kind;
};

const TypeInfo kTypes[] = {
    {"int8", nullptr, 1, strataInt8, Kind::kSigned},
    {"uint8", nullptr, 1, strataUint8, Kind::kUnsigned},
    {"int32", nullptr, 4, strataInt32, Kind::kSigned},
    {"uint32", nullptr, 4, strataUint32, Kind::kUnsigned},
    {"int64", nullptr, 8, strataInt64, Kind::kSigned},
    {"uint64", nullptr, 8, strataUint64, Kind::kUnsigned},
    {"fp16", &ref::kFp16, 2, strataFloat16, Kind::kNarrow},
    {"fp32", nullptr, 4, strataFloat32, Kind::kFloat32},
    {"fp64", nullptr, 8, strataFloat64, Kind::kFloat64},
    {"bf16", &ref::kBf16, 2, strataBfloat16, Kind::kNarrow},
    {"e4m3", &ref::kE4M3, 1, strataFloat8e4m3, Kind::kNarrow},
    {"e5m2", &ref::kE5M2, 1, strataFloat8e5m2, Kind::kNarrow},
};

const char* const kOpNames[] = {"sum", "prod", "max", "min", "avg"};

uint64_t ReadBits(const uint8_t* p, size_t size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size);  // little-endian host
  return v;
}

using I128 = __int128;
using U128 = unsigned __int128;

uint64_t WidthMask(size_t size) { return ~uint64_t{0} >> (64 - 8 * size); }

I128 IntValue(uint64_t bits, const TypeInfo& t) {
  const uint64_t masked = bits & WidthMask(t.size);
  if (t.kind == Kind::kUnsigned) return static_cast<I128>(masked);
  const uint64_t sign = uint64_t{1} << (8 * t.size - 1);
  return static_cast<I128>(static_cast<int64_t>((masked ^ sign) - sign));  // sign-extend
}

uint64_t WrapToWidth(U128 v, size_t size) { return static_cast<uint64_t>(v) & WidthMask(size); }

double FloatValue(uint64_t bits, const TypeInfo& t) {
  if (t.kind == Kind::kNarrow) return ref::Decode(static_cast<uint32_t>(bits), *t.format);
  if (t.kind == Kind::kFloat32) {
    float f;
    const uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b, 4);
    return f;
  }
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

double RefFloatOp(double x, double y, int op) {
  switch (op) {
    case strataProd:
      return x * y;
    case strataMax:
      return (std::isnan(x) || std::isnan(y)) ? std::numeric_limits<double>::quiet_NaN() : std::max(x, y);
    case strataMin:
      return (std::isnan(x) || std::isnan(y)) ? std::numeric_limits<double>::quiet_NaN() : std::min(x, y);
    default:
      return x + y;  // sum, avg
  }
}

// Checks one output element; returns an empty string when it is right.
std::string CheckElement(const TypeInfo& t, int op, uint64_t a, uint64_t b, uint64_t got, int divisor) {
  char msg[256];
  if (t.kind == Kind::kSigned || t.kind == Kind::kUnsigned) {
    const I128 x = IntValue(a, t);
    const I128 y = IntValue(b, t);
    U128 r;
    switch (op) {
      case strataProd:
        r = static_cast<U128>(x) * static_cast<U128>(y);
        break;
      case strataMax:
        r = static_cast<U128>(x > y ? x : y);
        break;
      case strataMin:
        r = static_cast<U128>(x < y ? x : y);
        break;
      default:
        r = static_cast<U128>(x) + static_cast<U128>(y);
    }
    uint64_t want = WrapToWidth(r, t.size);
    if (divisor > 1) want = WrapToWidth(static_cast<U128>(IntValue(want, t) / divisor), t.size);
    if (want == WrapToWidth(got, t.size)) return {};
    std::snprintf(msg, sizeof(msg), "a=%#llx b=%#llx: got %#llx want %#llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b), static_cast<unsigned long long>(got),
                  static_cast<unsigned long long>(want));
    return msg;
  }
  const double x = FloatValue(a, t);
  const double y = FloatValue(b, t);
  const double v = FloatValue(got, t);
  const double exact = RefFloatOp(x, y, op);
  bool ok;
  double want;
  if (t.kind == Kind::kFloat64) {
    want = divisor > 1 ? exact / divisor : exact;
    ok = SameValue(v, want);
  } else if (t.kind == Kind::kFloat32) {
    // fp32 divides after rounding the reduction to fp32 ("in its accumulation type"). Each double operation
    // here, rounded to float, equals the float operation: double has more than 2 * 24 + 2 bits.
    want = static_cast<float>(exact);
    if (divisor > 1) want = static_cast<float>(want / divisor);
    ok = SameValue(v, want);
  } else if (divisor <= 1) {
    want = ref::RoundToFormat(exact, *t.format);  // computed in fp32 and rounded once: exact for these inputs
    ok = SameValue(v, want);
  } else {
    want = ref::RoundToFormat(exact / divisor, *t.format);  // the fp32 quotient is rounded twice: allow one ulp
    ok = std::isnan(want)   ? std::isnan(v)
         : std::isinf(want) ? v == want
                            : std::fabs(v - want) <= ref::Ulp(want, *t.format);
  }
  if (ok) return {};
  std::snprintf(msg, sizeof(msg), "a=%#llx (%.17g) b=%#llx (%.17g): got %#llx (%.17g) want %.17g",
                static_cast<unsigned long long>(a), x, static_cast<unsigned long long>(b), y,
                static_cast<unsigned long long>(got), v, want);
  return msg;
}

// Random inputs: mostly values of similar magnitude, so sums round, plus raw bit patterns for the extremes
// (inf, NaN, subnormals, overflow).
void FillRandom(uint8_t* p, size_t count, const TypeInfo& t, std::mt19937_64& rng) {
  for (size_t i = 0; i < count; ++i) {
    uint64_t bits = rng();
    const bool raw = (bits & 7) == 0;
    bits >>= 3;
    if (!raw && t.kind != Kind::kSigned && t.kind != Kind::kUnsigned) {
      int exp_bits, mant_bits, bias;
      if (t.kind == Kind::kNarrow) {
        exp_bits = t.format->exp_bits;
        mant_bits = t.format->mant_bits;
        bias = t.format->bias;
      } else if (t.kind == Kind::kFloat32) {
        exp_bits = 8;
        mant_bits = 23;
        bias = 127;
      } else {
        exp_bits = 11;
        mant_bits = 52;
        bias = 1023;
      }
      const uint64_t sign = bits & 1;
      const uint64_t exp = static_cast<uint64_t>(bias - 3) + (bits >> 1) % 7;  // bias +- 3
      const uint64_t mant = (bits >> 4) & ((1ull << mant_bits) - 1);
      bits = (sign << (exp_bits + mant_bits)) | (exp << mant_bits) | mant;
    }
    std::memcpy(p + i * t.size, &bits, t.size);
  }
}

constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xa5;

// A buffer with guard bytes on both sides; `shift` elements of misalignment from a 64-byte boundary.
struct GuardedBuffer {
  GuardedBuffer(size_t bytes, size_t shift_bytes) : storage(bytes + 2 * kGuard + 64, kGuardByte) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(storage.data()) + kGuard;
    offset = ((base + 63) & ~uintptr_t{63}) - reinterpret_cast<uintptr_t>(storage.data()) + shift_bytes;
    size = bytes;
  }
  uint8_t* data() { return storage.data() + offset; }
  bool GuardsIntact() const {
    const auto intact = [](uint8_t v) { return v == kGuardByte; };
    const uint8_t* begin = storage.data();
    return std::all_of(begin, begin + offset, intact) &&
           std::all_of(begin + offset + size, begin + storage.size(), intact);
  }
  std::vector<uint8_t> storage;
  size_t offset = 0;
  size_t size = 0;
};

const size_t kCounts[] = {0, 1, 7, 15, 16, 17, 31, 33, 63, 65, 1000, 4099};

enum class Alias { kDistinct, kDstIsA, kDstIsB };
const char* const kAliasNames[] = {"dst distinct", "dst==a", "dst==b"};

// Restores the ISA the dispatcher chose after each test that forces one.
class IsaTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = HostReduceIsa(); }
  void TearDown() override { ASSERT_TRUE(ForceHostReduceIsa(saved_)); }
  SimdIsa saved_ = SimdIsa::Scalar;
};

using ReduceParam = std::tuple<int, int, int>;  // isa, type index, op

class HostReduceTest : public ::testing::TestWithParam<ReduceParam> {
 protected:
  void SetUp() override { saved_ = HostReduceIsa(); }
  void TearDown() override { ForceHostReduceIsa(saved_); }
  SimdIsa saved_ = SimdIsa::Scalar;
};

TEST_P(HostReduceTest, MatchesReference) {
  const SimdIsa isa = static_cast<SimdIsa>(std::get<0>(GetParam()));
  const TypeInfo& t = kTypes[std::get<1>(GetParam())];
  const int op = std::get<2>(GetParam());
  if (!ForceHostReduceIsa(isa)) GTEST_SKIP() << SimdIsaName(isa) << " not supported by this CPU";
  ASSERT_EQ(HostReduceIsa(), isa);

  std::mt19937_64 rng(1234 + 97 * std::get<1>(GetParam()) + op);
  const std::vector<int> divisors = op == strataAvg ? std::vector<int>{1, 3} : std::vector<int>{1};
  int failures = 0;
  for (size_t count : kCounts) {
    for (int alias = 0; alias < 3; ++alias) {
      for (int divisor : divisors) {
        const size_t bytes = count * t.size;
        const size_t shift = (count % 4) * t.size;  // vary the alignment, in whole elements
        GuardedBuffer a(bytes, shift), b(bytes, (count % 3) * t.size), dst(bytes, ((count + 1) % 4) * t.size);
        FillRandom(a.data(), count, t, rng);
        FillRandom(b.data(), count, t, rng);
        const std::vector<uint8_t> a0(a.data(), a.data() + bytes), b0(b.data(), b.data() + bytes);
        void* out = dst.data();
        if (alias == static_cast<int>(Alias::kDstIsA)) out = a.data();
        if (alias == static_cast<int>(Alias::kDstIsB)) out = b.data();
        HostReduce(out, a.data(), b.data(), count, t.type, static_cast<strataRedOp_t>(op), divisor);

        const uint8_t* res = static_cast<const uint8_t*>(out);
        for (size_t i = 0; i < count && failures < 5; ++i) {
          const std::string err =
              CheckElement(t, op, ReadBits(&a0[i * t.size], t.size), ReadBits(&b0[i * t.size], t.size),
                           ReadBits(res + i * t.size, t.size), divisor);
          if (!err.empty()) {
            ++failures;
            ADD_FAILURE() << t.name << " " << kOpNames[op] << " count " << count << " " << kAliasNames[alias]
                          << " divisor " << divisor << " element " << i << ": " << err;
          }
        }
        EXPECT_TRUE(a.GuardsIntact() && b.GuardsIntact() && dst.GuardsIntact())
            << "wrote outside the buffers: count " << count << " " << kAliasNames[alias];
        if (alias != static_cast<int>(Alias::kDstIsA)) {
          EXPECT_TRUE(std::equal(a0.begin(), a0.end(), a.data())) << "input a changed";
        }
        if (alias != static_cast<int>(Alias::kDstIsB)) {
          EXPECT_TRUE(std::equal(b0.begin(), b0.end(), b.data())) << "input b changed";
        }
        if (alias != static_cast<int>(Alias::kDistinct)) {
          EXPECT_TRUE(std::all_of(dst.data(), dst.data() + bytes, [](uint8_t v) { return v == kGuardByte; }));
        }
      }
    }
  }
}

std::string ReduceParamName(const ::testing::TestParamInfo<ReduceParam>& info) {
  return std::string(SimdIsaName(static_cast<SimdIsa>(std::get<0>(info.param)))) + "_" +
         kTypes[std::get<1>(info.param)].name + "_" + kOpNames[std::get<2>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(AllIsasTypesOps, HostReduceTest,
                         ::testing::Combine(::testing::Values(static_cast<int>(SimdIsa::Scalar),
                                                              static_cast<int>(SimdIsa::Avx2),
                                                              static_cast<int>(SimdIsa::Avx512)),
                                            ::testing::Range(0, static_cast<int>(std::size(kTypes))),
                                            ::testing::Range(0, static_cast<int>(strataNumOps))),
                         ReduceParamName);

// ---- HostDivide ----

class HostDivideTest : public ::testing::TestWithParam<std::tuple<int, int>> {
 protected:
  void SetUp() override { saved_ = HostReduceIsa(); }
  void TearDown() override { ForceHostReduceIsa(saved_); }
  SimdIsa saved_ = SimdIsa::Scalar;
};

TEST_P(HostDivideTest, MatchesReference) {
  const SimdIsa isa = static_cast<SimdIsa>(std::get<0>(GetParam()));
  const TypeInfo& t = kTypes[std::get<1>(GetParam())];
  if (!ForceHostReduceIsa(isa)) GTEST_SKIP() << SimdIsaName(isa) << " not supported by this CPU";
  std::mt19937_64 rng(99 + std::get<1>(GetParam()));
  int failures = 0;
  for (size_t count : kCounts) {
    for (int divisor : {1, 2, 3, 7, 300}) {
      for (bool in_place : {false, true}) {
        const size_t bytes = count * t.size;
        GuardedBuffer src(bytes, (count % 4) * t.size), dst(bytes, ((count + 2) % 4) * t.size);
        FillRandom(src.data(), count, t, rng);
        const std::vector<uint8_t> src0(src.data(), src.data() + bytes);
        uint8_t* out = in_place ? src.data() : dst.data();
        HostDivide(out, src.data(), count, t.type, divisor);
        for (size_t i = 0; i < count && failures < 5; ++i) {
          const uint64_t in = ReadBits(&src0[i * t.size], t.size);
          const uint64_t got = ReadBits(out + i * t.size, t.size);
          bool ok;
          if (t.kind == Kind::kSigned || t.kind == Kind::kUnsigned) {
            const I128 want = divisor > 1 ? IntValue(in, t) / divisor : IntValue(in, t);  // truncates toward 0
            ok = WrapToWidth(static_cast<U128>(want), t.size) == WrapToWidth(got, t.size);
          } else {
            const double x = FloatValue(in, t);
            const double v = FloatValue(got, t);
            const double q = divisor > 1 ? x / divisor : x;
            if (t.kind == Kind::kFloat64) {
              ok = SameValue(v, q);
            } else if (t.kind == Kind::kFloat32) {
              ok = SameValue(v, static_cast<float>(q));
            } else {
              const double want = ref::RoundToFormat(q, *t.format);
              ok = std::isnan(want)   ? std::isnan(v)
                   : std::isinf(want) ? v == want
                                      : std::fabs(v - want) <= ref::Ulp(want, *t.format);
            }
          }
          if (!ok) {
            ++failures;
            ADD_FAILURE() << t.name << " count " << count << " divisor " << divisor << " element " << i << ": in "
                          << std::hex << in << " got " << got;
          }
        }
        EXPECT_TRUE(src.GuardsIntact() && dst.GuardsIntact());
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsasTypes, HostDivideTest,
                         ::testing::Combine(::testing::Values(static_cast<int>(SimdIsa::Scalar),
                                                              static_cast<int>(SimdIsa::Avx2),
                                                              static_cast<int>(SimdIsa::Avx512)),
                                            ::testing::Range(0, static_cast<int>(std::size(kTypes)))),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
                           return std::string(SimdIsaName(static_cast<SimdIsa>(std::get<0>(info.param)))) + "_" +
                                  kTypes[std::get<1>(info.param)].name;
                         });

TEST(HostDivide, IntegersTruncateTowardZero) {
  int8_t i8[] = {-7, 7, -128, 127};
  HostDivide(i8, i8, 4, strataInt8, 2);
  EXPECT_EQ(i8[0], -3);
  EXPECT_EQ(i8[1], 3);
  EXPECT_EQ(i8[2], -64);
  EXPECT_EQ(i8[3], 63);
  uint8_t u8[] = {200, 255};
  HostDivide(u8, u8, 2, strataUint8, 3);
  EXPECT_EQ(u8[0], 66);
  EXPECT_EQ(u8[1], 85);
  int64_t i64[] = {std::numeric_limits<int64_t>::min(), -5};
  HostDivide(i64, i64, 2, strataInt64, 4);
  EXPECT_EQ(i64[0], std::numeric_limits<int64_t>::min() / 4);
  EXPECT_EQ(i64[1], -1);
  int32_t i32[] = {-1000};
  HostDivide(i32, i32, 1, strataInt32, 300);  // divisor past int8's range
  EXPECT_EQ(i32[0], -3);
}

TEST(HostReduce, AvgOfIntegersWrapsThenTruncates) {
  int32_t a[] = {std::numeric_limits<int32_t>::max(), -3};
  int32_t b[] = {1, 0};
  int32_t d[2];
  HostReduce(d, a, b, 2, strataInt32, strataAvg, 2);
  EXPECT_EQ(d[0], std::numeric_limits<int32_t>::min() / 2);
  EXPECT_EQ(d[1], -1);
}

TEST(HostReduce, FloatMaxMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a(37, 1.0f), b(37, 2.0f);
  a[3] = nan;
  b[20] = nan;
  a[36] = nan;
  std::vector<float> d(37);
  for (strataRedOp_t op : {strataMax, strataMin}) {
    HostReduce(d.data(), a.data(), b.data(), d.size(), strataFloat32, op, 1);
    for (size_t i = 0; i < d.size(); ++i) {
      if (i == 3 || i == 20 || i == 36) {
        EXPECT_TRUE(std::isnan(d[i])) << i;
      } else {
        EXPECT_EQ(d[i], op == strataMax ? 2.0f : 1.0f) << i;
      }
    }
  }
}

TEST(HostReduce, ZeroCountTouchesNothing) {
  HostReduce(nullptr, nullptr, nullptr, 0, strataFloat32, strataSum, 1);
  HostDivide(nullptr, nullptr, 0, strataFloat32, 2);
  HostCopy(nullptr, nullptr, 0);
}

// ---- HostCopy, dispatch and sizes ----

TEST(HostCopy, CopiesExactlyTheBytes) {
  std::mt19937_64 rng(5);
  // The last two take the streaming-store path.
  for (size_t bytes : {size_t{1}, size_t{7}, size_t{64}, size_t{1000}, size_t{1} << 20, (size_t{3} << 20) + 5,
                       size_t{8} << 20, (size_t{9} << 20) + 13}) {
    GuardedBuffer src(bytes, bytes % 8), dst(bytes, 3);
    for (size_t i = 0; i < bytes; i += 8) {
      const uint64_t v = rng();
      std::memcpy(src.data() + i, &v, std::min<size_t>(8, bytes - i));
    }
    HostCopy(dst.data(), src.data(), bytes);
    EXPECT_EQ(std::memcmp(dst.data(), src.data(), bytes), 0) << bytes;
    EXPECT_TRUE(dst.GuardsIntact()) << bytes;
  }
}

// The streaming variant reduces block by block through a buffer of its own: the same bits as HostReduce for every
// type, op and divisor, at counts that end inside a block and destinations off a cache line.
TEST(HostReduceStreaming, MatchesHostReduce) {
  std::mt19937_64 rng(11);
  for (const TypeInfo& t : kTypes) {
    for (int op = 0; op < strataNumOps; ++op) {
      for (size_t count : {size_t{1}, size_t{15}, size_t{2048}, size_t{5000}, size_t{70001}}) {
        for (int divisor : {1, 3}) {
          const size_t bytes = count * t.size;
          GuardedBuffer a(bytes, 0), b(bytes, t.size), want(bytes, 0), got(bytes, (count % 5) * t.size);
          FillRandom(a.data(), count, t, rng);
          FillRandom(b.data(), count, t, rng);
          const auto o = static_cast<strataRedOp_t>(op);
          HostReduce(want.data(), a.data(), b.data(), count, t.type, o, divisor);
          HostReduceStreaming(got.data(), a.data(), b.data(), count, t.type, o, divisor);
          EXPECT_EQ(std::memcmp(got.data(), want.data(), bytes), 0)
              << t.name << " " << kOpNames[op] << " count " << count << " divisor " << divisor;
          EXPECT_TRUE(got.GuardsIntact()) << t.name << " count " << count;
        }
      }
    }
  }
}

TEST(HostCopyStreaming, CopiesExactlyTheBytes) {
  std::mt19937_64 rng(6);
  for (size_t bytes : {size_t{1}, size_t{63}, size_t{64}, size_t{4097}, size_t{131072}, size_t{200003}}) {
    GuardedBuffer src(bytes, 0), dst(bytes, bytes % 64);
    for (size_t i = 0; i < bytes; ++i) src.data()[i] = static_cast<uint8_t>(rng());
    HostCopyStreaming(dst.data(), src.data(), bytes);
    EXPECT_EQ(std::memcmp(dst.data(), src.data(), bytes), 0) << bytes;
    EXPECT_TRUE(dst.GuardsIntact()) << bytes;
  }
}

// A claim is a hint: it leaves the bytes as they were, at any alignment and length, and on memory this process may
// only read (a claim made by writing would fault there).
TEST(HostClaimLines, ChangesNothingAndNeverFaults) {
  std::vector<uint8_t> buf(4096 + 128);
  std::mt19937 rng(7);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  const std::vector<uint8_t> before = buf;
  for (size_t offset : {0, 1, 63, 64, 100})
    for (size_t bytes : {0, 1, 64, 65, 4000}) HostClaimLines(buf.data() + offset, bytes);
  EXPECT_EQ(buf, before);
  const long page = sysconf(_SC_PAGESIZE);
  void* ro = mmap(nullptr, static_cast<size_t>(2 * page), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(ro, MAP_FAILED);
  HostClaimLines(static_cast<char*>(ro) + 5, static_cast<size_t>(2 * page - 5));
  EXPECT_EQ(static_cast<const char*>(ro)[page], 0);
  munmap(ro, static_cast<size_t>(2 * page));
}

TEST_F(IsaTest, ForcingChecksTheCpu) {
  EXPECT_TRUE(ForceHostReduceIsa(SimdIsa::Scalar));
  EXPECT_EQ(HostReduceIsa(), SimdIsa::Scalar);
  __builtin_cpu_init();
  const bool has_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  EXPECT_EQ(ForceHostReduceIsa(SimdIsa::Avx512), has_avx512);
  EXPECT_EQ(HostReduceIsa(), has_avx512 ? SimdIsa::Avx512 : SimdIsa::Scalar);
  EXPECT_FALSE(ForceHostReduceIsa(static_cast<SimdIsa>(7)));
  EXPECT_STREQ(SimdIsaName(SimdIsa::Scalar), "scalar");
  EXPECT_STREQ(SimdIsaName(SimdIsa::Avx2), "avx2");
  EXPECT_STREQ(SimdIsaName(SimdIsa::Avx512), "avx512");
}

TEST(DataTypeSize, MatchesTheTypes) {
  for (const TypeInfo& t : kTypes) EXPECT_EQ(DataTypeSize(t.type), t.size) << t.name;
  EXPECT_EQ(DataTypeSize(strataNumTypes), 0u);
}

// ---- conversions, over every bit pattern ----

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Decode, re-encode and midpoint rounding for one format, over all its patterns.
template <typename Decode, typename Encode>
void CheckFormatExhaustively(const ref::FloatFormat& f, Decode decode, Encode encode) {
  const int total = 1 + f.exp_bits + f.mant_bits;
  const uint32_t count = 1u << total;
  const uint32_t sign_bit = 1u << (total - 1);
  int failures = 0;
  for (uint32_t p = 0; p < count && failures < 10; ++p) {
    const double want = ref::Decode(p, f);
    const float got = decode(p);
    if (!(SameValue(got, want) && std::signbit(got) == std::signbit(want))) {
      ++failures;
      ADD_FAILURE() << f.name << " decode " << std::hex << p << ": got " << got << " want " << want;
      continue;
    }
    const uint32_t back = encode(got);
    if (std::isnan(want)) {
      if (!std::isnan(ref::Decode(back, f)) || ((back & sign_bit) != (p & sign_bit))) {
        ++failures;
        ADD_FAILURE() << f.name << " NaN " << std::hex << p << " re-encoded as " << back;
      }
      continue;
    }
    if (back != p) {
      ++failures;
      ADD_FAILURE() << f.name << " round trip " << std::hex << p << " -> " << back;
    }
    // Between this value and the next larger magnitude: the midpoint goes to the even code, and a float
    // just on either side of it goes to the nearer one.
    const uint32_t magnitude = p & (sign_bit - 1);
    const double next = ref::Decode(p + 1, f);
    if (magnitude + 1 >= sign_bit || std::isnan(next) || std::isinf(want) || std::isinf(next)) continue;
    const double mid = (want + next) / 2;  // exact in float for all four formats
    const float mid_f = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(mid_f), mid);
    const uint32_t even = (p & 1u) ? p + 1 : p;
    const float above = std::nextafter(mid_f, std::signbit(mid_f) ? -INFINITY : INFINITY);
    const float below = std::nextafter(mid_f, 0.0f);
    if (encode(mid_f) != even || encode(above) != p + 1 || encode(below) != p) {
      ++failures;
      ADD_FAILURE() << f.name << " rounding between " << std::hex << p << " and " << p + 1 << ": mid -> "
                    << encode(mid_f) << " above -> " << encode(above) << " below -> " << encode(below);
    }
  }
}

TEST(Conversions, Fp16AllPatterns) {
  CheckFormatExhaustively(
      ref::kFp16, [](uint32_t p) { return math::HalfToFloat(static_cast<uint16_t>(p)); },
      [](float f) { return static_cast<uint32_t>(math::FloatToHalf(f)); });
}

TEST(Conversions, Bf16AllPatterns) {
  CheckFormatExhaustively(
      ref::kBf16, [](uint32_t p) { return math::BFloat16ToFloat(static_cast<uint16_t>(p)); },
      [](float f) { return static_cast<uint32_t>(math::FloatToBFloat16(f)); });
}

TEST(Conversions, Fp8E4M3AllPatterns) {
  CheckFormatExhaustively(
      ref::kE4M3, [](uint32_t p) { return math::Fp8E4M3ToFloat(static_cast<uint8_t>(p)); },
      [](float f) { return static_cast<uint32_t>(math::FloatToFp8E4M3(f)); });
}

TEST(Conversions, Fp8E5M2AllPatterns) {
  CheckFormatExhaustively(
      ref::kE5M2, [](uint32_t p) { return math::Fp8E5M2ToFloat(static_cast<uint8_t>(p)); },
      [](float f) { return static_cast<uint32_t>(math::FloatToFp8E5M2(f)); });
}

// Every encoder against the reference rounding, over float patterns spread across the whole range.
TEST(Conversions, EncodersMatchReferenceOnSampledFloats) {
  struct Case {
    const ref::FloatFormat* f;
    uint32_t (*encode)(float);
  };
  const Case cases[] = {
      {&ref::kFp16, [](float v) { return static_cast<uint32_t>(math::FloatToHalf(v)); }},
      {&ref::kBf16, [](float v) { return static_cast<uint32_t>(math::FloatToBFloat16(v)); }},
      {&ref::kE4M3, [](float v) { return static_cast<uint32_t>(math::FloatToFp8E4M3(v)); }},
      {&ref::kE5M2, [](float v) { return static_cast<uint32_t>(math::FloatToFp8E5M2(v)); }},
  };
  for (const Case& c : cases) {
    int failures = 0;
    for (uint64_t u = 0; u <= 0xffffffffull && failures < 10; u += 2053) {
      const float x = FromBits(static_cast<uint32_t>(u));
      const double want = ref::RoundToFormat(x, *c.f);
      const double got = ref::Decode(c.encode(x), *c.f);
      if (!(SameValue(got, want) && (std::isnan(want) || std::signbit(got) == std::signbit(want)))) {
        ++failures;
        ADD_FAILURE() << c.f->name << " encode " << std::hex << u << " (" << x << "): got " << got << " want " << want;
      }
    }
  }
}

TEST(Conversions, KnownValues) {
  // fp16
  EXPECT_EQ(math::FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(math::FloatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(math::FloatToHalf(65520.0f), 0x7c00);  // tie between 65504 and 65536 goes to even: inf
  EXPECT_EQ(math::FloatToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(math::FloatToHalf(-INFINITY), 0xfc00);
  EXPECT_EQ(math::FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(math::FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(math::FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // tie between 1 and 2 subnormal units
  EXPECT_EQ(math::FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(math::FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(math::FloatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3c02);
  EXPECT_EQ(math::FloatToHalf(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(math::HalfToFloat(math::FloatToHalf(NAN))));
  EXPECT_EQ(math::HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(math::HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(math::HalfToFloat(0xfc00), -INFINITY);
  // bf16
  EXPECT_EQ(math::FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(math::FloatToBFloat16(FromBits(0x3f808000)), 0x3f80);  // tie, even stays
  EXPECT_EQ(math::FloatToBFloat16(FromBits(0x3f818000)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(math::FloatToBFloat16(FromBits(0x7f7f8000)), 0x7f80);  // past max finite: inf
  EXPECT_EQ(math::FloatToBFloat16(FromBits(0x00000001)), 0x0000);
  EXPECT_EQ(math::FloatToBFloat16(FromBits(0x00008000)), 0x0000);  // tie to even among subnormals
  EXPECT_EQ(math::FloatToBFloat16(FromBits(0x00018000)), 0x0002);
  EXPECT_EQ(math::FloatToBFloat16(FromBits(0xffc12345)), 0xffc1);  // NaN keeps sign and top payload
  EXPECT_EQ(math::FloatToBFloat16(FromBits(0x7f800001)), 0x7fc0);  // signaling NaN made quiet, not inf
  // e4m3
  EXPECT_EQ(math::Fp8E4M3ToFloat(0x7e), 448.0f);
  EXPECT_EQ(math::Fp8E4M3ToFloat(0xfe), -448.0f);
  EXPECT_EQ(math::Fp8E4M3ToFloat(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(math::Fp8E4M3ToFloat(0x08), std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(math::Fp8E4M3ToFloat(0x7f)));
  EXPECT_TRUE(std::isnan(math::Fp8E4M3ToFloat(0xff)));
  EXPECT_EQ(math::FloatToFp8E4M3(448.0f), 0x7e);
  EXPECT_EQ(math::FloatToFp8E4M3(464.0f), 0x7e);
  EXPECT_EQ(math::FloatToFp8E4M3(500.0f), 0x7e);
  EXPECT_EQ(math::FloatToFp8E4M3(1e30f), 0x7e);
  EXPECT_EQ(math::FloatToFp8E4M3(-1e30f), 0xfe);
  EXPECT_EQ(math::FloatToFp8E4M3(INFINITY), 0x7e);
  EXPECT_EQ(math::FloatToFp8E4M3(-INFINITY), 0xfe);
  EXPECT_EQ(math::FloatToFp8E4M3(NAN), 0x7f);
  EXPECT_EQ(math::FloatToFp8E4M3(-NAN), 0xff);
  EXPECT_EQ(math::FloatToFp8E4M3(1.0f + 1.0f / 16), 0x38);  // tie between 1 and 1.125: even
  EXPECT_EQ(math::FloatToFp8E4M3(1.0f + 3.0f / 16), 0x3a);  // tie between 1.125 and 1.25: even
  EXPECT_EQ(math::FloatToFp8E4M3(std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(math::FloatToFp8E4M3(std::ldexp(3.0f, -10)), 0x02);
  // e5m2
  EXPECT_EQ(math::Fp8E5M2ToFloat(0x7b), 57344.0f);
  EXPECT_EQ(math::Fp8E5M2ToFloat(0x7c), INFINITY);
  EXPECT_EQ(math::Fp8E5M2ToFloat(0x01), std::ldexp(1.0f, -16));
  EXPECT_TRUE(std::isnan(math::Fp8E5M2ToFloat(0x7e)));
  EXPECT_EQ(math::FloatToFp8E5M2(57344.0f), 0x7b);
  EXPECT_EQ(math::FloatToFp8E5M2(61440.0f), 0x7b);  // would round to 2^16: saturates
  EXPECT_EQ(math::FloatToFp8E5M2(1e30f), 0x7b);
  EXPECT_EQ(math::FloatToFp8E5M2(-1e30f), 0xfb);
  EXPECT_EQ(math::FloatToFp8E5M2(INFINITY), 0x7c);
  EXPECT_EQ(math::FloatToFp8E5M2(-INFINITY), 0xfc);
  EXPECT_TRUE(std::isnan(math::Fp8E5M2ToFloat(math::FloatToFp8E5M2(NAN))));
  EXPECT_EQ(math::FloatToFp8E5M2(std::ldexp(1.0f, -17)), 0x00);  // tie to even: zero
  EXPECT_EQ(math::FloatToFp8E5M2(std::ldexp(3.0f, -17)), 0x02);
}

// The scalar fp16 conversions against the F16C instructions, where the CPU has them (NaN payloads too: the
// AVX2/AVX-512 loops use these instructions and must agree bit for bit with the scalar tails).
__attribute__((target("f16c"))) uint16_t HardwareFloatToHalf(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, 0 /* nearest even */));
}
__attribute__((target("f16c"))) float HardwareHalfToFloat(uint16_t h) { return _cvtsh_ss(h); }

TEST(Conversions, Fp16MatchesF16cBitForBit) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || (ecx & bit_F16C) == 0) GTEST_SKIP() << "no F16C";
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_EQ(Bits(math::HalfToFloat(static_cast<uint16_t>(h))), Bits(HardwareHalfToFloat(static_cast<uint16_t>(h))))
        << std::hex << h;
  }
  int failures = 0;
  for (uint64_t u = 0; u <= 0xffffffffull && failures < 10; u += 257) {
    const float f = FromBits(static_cast<uint32_t>(u));
    if (math::FloatToHalf(f) != HardwareFloatToHalf(f)) {
      ++failures;
      ADD_FAILURE() << std::hex << u << ": " << math::FloatToHalf(f) << " vs F16C " << HardwareFloatToHalf(f);
    }
  }
}

}  // namespace
}  // namespace strata
