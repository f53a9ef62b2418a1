// The quantization spec: the STRATA_QUANT grammar (valid specs, canonical round trip, every kind of malformed
// input with its message, random strings), the public options struct both ways, the C entry point, eligibility
// and the choice between the spec and the exact path.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "exec/quant/quant_spec.h"
#include "strata/strata.h"

namespace strata {
namespace {

using math::QuantFormat;
using math::QuantRounding;
using math::QuantScale;

QuantSpec MustParse(const std::string& text) {
  QuantSpec s;
  const Status st = ParseQuantSpec(text, &s);
  EXPECT_TRUE(st.ok()) << text << ": " << st.message();
  return s;
}

std::string ErrorOf(const std::string& text) {
  QuantSpec s;
  s.params.block = 999;  // must stay untouched on error
  const Status st = ParseQuantSpec(text, &s);
  EXPECT_FALSE(st.ok()) << "accepted '" << text << "'";
  EXPECT_EQ(st.code(), strataInvalidArgument);
  EXPECT_EQ(s.params.block, 999u) << "output written on error for '" << text << "'";
  return st.message();
}

TEST(QuantSpecParse, ValidSpecs) {
  QuantSpec s = MustParse("int8:128");
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.params.format, QuantFormat::kInt8);
  EXPECT_EQ(s.params.block, 128u);
  EXPECT_EQ(s.params.scale, QuantScale::kFp32);
  EXPECT_EQ(s.params.rounding, QuantRounding::kNearest);

  s = MustParse("int4:32:fp16");
  EXPECT_EQ(s.params.format, QuantFormat::kInt4);
  EXPECT_EQ(s.params.block, 32u);
  EXPECT_EQ(s.params.scale, QuantScale::kFp16);

  s = MustParse("fp8e4m3:64:fp32:stochastic:42");
  EXPECT_EQ(s.params.format, QuantFormat::kFp8E4M3);
  EXPECT_EQ(s.params.rounding, QuantRounding::kStochastic);
  EXPECT_EQ(s.params.seed, 42u);

  s = MustParse("fp8e5m2:4096:fp16:stochastic:18446744073709551615");
  EXPECT_EQ(s.params.seed, 18446744073709551615ull);
  EXPECT_EQ(s.params.block, 4096u);

  s = MustParse("bf16");
  EXPECT_EQ(s.params.format, QuantFormat::kBf16);
  EXPECT_EQ(s.params.block, 128u);  // the default
  EXPECT_EQ(MustParse("fp16").params.format, QuantFormat::kFp16);
  EXPECT_EQ(MustParse("int8:32:fp32:stochastic").params.seed, 0u);

  EXPECT_FALSE(MustParse("none").enabled);
  EXPECT_FALSE(MustParse("off").enabled);
}

TEST(QuantSpecParse, CanonicalTextRoundTrips) {
  EXPECT_EQ(QuantSpecString(MustParse("int8")), "int8:128:fp32:nearest");
  EXPECT_EQ(QuantSpecString(MustParse("int4:32:fp16")), "int4:32:fp16:nearest");
  EXPECT_EQ(QuantSpecString(MustParse("fp8e4m3:64:fp32:stochastic:42")), "fp8e4m3:64:fp32:stochastic:42");
  EXPECT_EQ(QuantSpecString(MustParse("none")), "none");
  for (const char* text : {"bf16:32", "fp16:4096:fp16", "fp8e5m2:96:fp32:stochastic", "int4:32:fp16:nearest"}) {
    const QuantSpec a = MustParse(text);
    const QuantSpec b = MustParse(QuantSpecString(a));
    EXPECT_EQ(QuantSpecString(a), QuantSpecString(b));
  }
}

TEST(QuantSpecParse, MalformedSpecsSayWhatIsWrong) {
  EXPECT_NE(ErrorOf("").find("empty"), std::string::npos);
  EXPECT_NE(ErrorOf("int9").find("unknown format 'int9'"), std::string::npos);
  EXPECT_NE(ErrorOf("INT8").find("character 0x49 at position 0"), std::string::npos);
  EXPECT_NE(ErrorOf("int8 :128").find("character 0x20"), std::string::npos);
  EXPECT_NE(ErrorOf("int8:128\n").find("0x0a"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string("int8\0:1", 7)).find("0x00"), std::string::npos);
  EXPECT_NE(ErrorOf("int8::fp16").find("field 2 is empty"), std::string::npos);
  EXPECT_NE(ErrorOf("int8:128:").find("field 3 is empty"), std::string::npos);
  EXPECT_NE(ErrorOf(":int8").find("field 1 is empty"), std::string::npos);
  for (const char* bad : {"int8:0", "int8:16", "int8:31", "int8:33", "int8:4097", "int8:8192", "int8:-32", "int8:+32",
                          "int8:1e3", "int8:99999999999999999999999", "int8:0x20"}) {
    const std::string msg = ErrorOf(bad);
    EXPECT_TRUE(msg.find("block size") != std::string::npos || msg.find("character") != std::string::npos)
        << bad << ": " << msg;
  }
  EXPECT_NE(ErrorOf("int8:128:fp64").find("scale format 'fp64'"), std::string::npos);
  EXPECT_NE(ErrorOf("int8:128:fp32:up").find("rounding 'up'"), std::string::npos);
  EXPECT_NE(ErrorOf("int8:128:fp32:nearest:5").find("only stochastic takes one"), std::string::npos);
  EXPECT_NE(ErrorOf("int8:128:fp32:stochastic:18446744073709551616").find("below 2^64"), std::string::npos);
  EXPECT_NE(ErrorOf("int8:128:fp32:stochastic:1:2").find("at most 5"), std::string::npos);
  EXPECT_NE(ErrorOf("none:128").find("no further fields"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(65, 'a')).find("longer than"), std::string::npos);
}

// Random strings over the grammar's alphabet and beyond: never a crash, and whatever parses prints back to a
// spec that parses to the same thing.
TEST(QuantSpecParse, RandomStringsParseOrFailCleanly) {
  std::mt19937 rng(1);
  const std::string pieces[] = {"int8", "int4", "fp8e4m3", "bf16", "fp16", "fp8e5m2", ":", "32", "128", "4096", "fp32",
                                "stochastic", "nearest", "7", "0", "\xff", " ", "::", "none", "999999999999"};
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const int parts = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < parts; ++k) {
      if (rng() % 5 == 0) {
        s += static_cast<char>(rng() % 256);
      } else {
        s += pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];
      }
    }
    QuantSpec spec;
    const Status st = ParseQuantSpec(s, &spec);
    if (st.ok()) {
      ++parsed;
      QuantSpec again;
      ASSERT_TRUE(ParseQuantSpec(QuantSpecString(spec), &again).ok()) << s;
      ASSERT_EQ(QuantSpecString(again), QuantSpecString(spec));
      if (spec.enabled) {
        ASSERT_TRUE(ValidateQuantParams(spec.params).ok());
      }
    } else {
      ASSERT_FALSE(st.message().empty());
      for (char c : st.message()) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "unprintable byte in message for " << s;
    }
  }
  EXPECT_GT(parsed, 100);
}

TEST(QuantSpecOptions, PublicStructBothWays) {
  strataQuantOptions_t o = STRATA_QUANT_OPTIONS_INITIALIZER;
  QuantSpec s;
  ASSERT_TRUE(QuantSpecFromOptions(&o, &s).ok());
  EXPECT_FALSE(s.enabled);
  ASSERT_TRUE(QuantSpecFromOptions(nullptr, &s).ok());
  EXPECT_FALSE(s.enabled);

  o.format = strataQuantInt4;
  o.blockSize = 32;
  o.scaleFormat = strataQuantScaleFp16;
  o.rounding = strataQuantRoundStochastic;
  o.seed = 9;
  ASSERT_TRUE(QuantSpecFromOptions(&o, &s).ok());
  EXPECT_EQ(QuantSpecString(s), "int4:32:fp16:stochastic:9");
  strataQuantOptions_t back;
  QuantOptionsFromSpec(s, &back);
  EXPECT_EQ(back.format, strataQuantInt4);
  EXPECT_EQ(back.blockSize, 32);
  EXPECT_EQ(back.scaleFormat, strataQuantScaleFp16);
  EXPECT_EQ(back.rounding, strataQuantRoundStochastic);
  EXPECT_EQ(back.seed, 9u);

  strataQuantOptions_t bad = o;
  bad.blockSize = 48;
  EXPECT_FALSE(QuantSpecFromOptions(&bad, &s).ok());
  bad = o;
  bad.format = 7;
  EXPECT_FALSE(QuantSpecFromOptions(&bad, &s).ok());
  bad = o;
  bad.scaleFormat = 2;
  EXPECT_FALSE(QuantSpecFromOptions(&bad, &s).ok());
  bad = o;
  bad.magic = 0;
  EXPECT_FALSE(QuantSpecFromOptions(&bad, &s).ok());
  bad = o;
  bad.size = 8;
  EXPECT_FALSE(QuantSpecFromOptions(&bad, &s).ok());
}

TEST(QuantSpecOptions, CEntryPoint) {
  strataQuantOptions_t o = STRATA_QUANT_OPTIONS_INITIALIZER;
  ASSERT_EQ(strataQuantOptionsParse("int8:32:fp16", &o), strataSuccess);
  EXPECT_EQ(o.format, strataQuantInt8);
  EXPECT_EQ(o.blockSize, 32);
  EXPECT_EQ(o.scaleFormat, strataQuantScaleFp16);
  EXPECT_EQ(strataQuantOptionsParse("int8:48", &o), strataInvalidArgument);
  EXPECT_NE(std::string(strataGetLastError(nullptr)).find("block size '48'"), std::string::npos);
  EXPECT_EQ(o.blockSize, 32) << "options changed by a failed parse";
  EXPECT_EQ(strataQuantOptionsParse(nullptr, &o), strataInvalidArgument);
  EXPECT_EQ(strataQuantOptionsParse("int8", nullptr), strataInvalidArgument);
  strataQuantOptions_t raw{};
  EXPECT_EQ(strataQuantOptionsParse("int8", &raw), strataInvalidArgument);
}

TEST(QuantSpecEligibility, OnlySumAndAvgOfFloats) {
  for (int t = 0; t < strataNumTypes; ++t) {
    for (int op = 0; op < strataNumOps; ++op) {
      const bool want = (t == strataFloat32 || t == strataFloat16 || t == strataBfloat16) &&
                        (op == strataSum || op == strataAvg);
      EXPECT_EQ(QuantEligible(static_cast<strataDataType_t>(t), static_cast<strataRedOp_t>(op)), want)
          << "type " << t << " op " << op;
    }
  }
}

TEST(QuantSpecEligibility, ResolveBySource) {
  const QuantSpec spec = MustParse("int8:128");
  QuantSpec chosen;
  // Eligible and large: quantized, whatever the source.
  for (QuantSource src : {QuantSource::kCall, QuantSource::kComm, QuantSource::kEnv}) {
    ASSERT_TRUE(ResolveQuantSpec(spec, src, strataFloat32, strataSum, 1 << 20, 1 << 20, &chosen).ok());
    EXPECT_TRUE(chosen.enabled);
  }
  // Below the minimum: exact, unless the call itself asked.
  ASSERT_TRUE(ResolveQuantSpec(spec, QuantSource::kEnv, strataFloat32, strataSum, 1000, 1 << 20, &chosen).ok());
  EXPECT_FALSE(chosen.enabled);
  ASSERT_TRUE(ResolveQuantSpec(spec, QuantSource::kComm, strataBfloat16, strataAvg, 1000, 1 << 20, &chosen).ok());
  EXPECT_FALSE(chosen.enabled);
  ASSERT_TRUE(ResolveQuantSpec(spec, QuantSource::kCall, strataFloat16, strataSum, 1000, 1 << 20, &chosen).ok());
  EXPECT_TRUE(chosen.enabled);
  // Ineligible: an error when the call asked for it, exact when the spec covers every call of the
  // communicator (its config or the environment: barriers and integer gathers run there too).
  EXPECT_EQ(ResolveQuantSpec(spec, QuantSource::kCall, strataInt32, strataSum, 1 << 20, 0, &chosen).code(),
            strataInvalidArgument);
  ASSERT_TRUE(ResolveQuantSpec(spec, QuantSource::kComm, strataFloat32, strataMax, 1 << 20, 0, &chosen).ok());
  EXPECT_FALSE(chosen.enabled);
  ASSERT_TRUE(ResolveQuantSpec(spec, QuantSource::kEnv, strataFloat64, strataSum, 1 << 20, 0, &chosen).ok());
  EXPECT_FALSE(chosen.enabled);
  // No spec: exact.
  ASSERT_TRUE(ResolveQuantSpec(QuantSpec{}, QuantSource::kCall, strataInt32, strataMax, 1 << 20, 0, &chosen).ok());
  EXPECT_FALSE(chosen.enabled);
}

}  // namespace
}  // namespace strata
