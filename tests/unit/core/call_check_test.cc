// STRATA_CHECK_CALLS signatures as they come off the wire: every byte value of the datatype and op fields,
// the ones outside the enums included, names a field and the ranks, never a value of an enum it is not.
#include "core/call_check.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

CallSignature Sig(uint8_t dtype, uint8_t op, uint64_t count = 1000) {
  CallSignature s = MakeSignature(CollDesc{}, 7);
  s.dtype = dtype;
  s.op = op;
  s.count = count;
  return s;
}

TEST(CallCheck, AgreeingSignaturesPass) {
  const std::vector<CallSignature> all(3, Sig(strataFloat32, strataSum));
  EXPECT_TRUE(CompareSignatures(all).ok());
}

TEST(CallCheck, EveryWireByteOfDatatypeAndOpIsNamed) {
  for (int v = 0; v < 256; ++v) {
    const std::vector<CallSignature> all = {Sig(strataFloat32, strataSum), Sig(static_cast<uint8_t>(v), strataSum),
                                            Sig(strataFloat32, static_cast<uint8_t>(v))};
    const Status st = CompareSignatures(all);
    ASSERT_FALSE(st.ok()) << v;
    EXPECT_EQ(st.code(), strataInvalidUsage);
    const std::string& m = st.message();
    if (v != strataFloat32) {
      EXPECT_NE(m.find("disagree on the datatype"), std::string::npos) << m;
      EXPECT_NE(m.find(v < strataNumTypes ? DataTypeName(v) : "unknown-type"), std::string::npos) << m;
    }
    if (v != strataSum) {
      EXPECT_NE(m.find("disagree on the op"), std::string::npos) << m;
      EXPECT_NE(m.find(v < strataNumOps ? RedOpName(v) : "unknown-op"), std::string::npos) << m;
      EXPECT_NE(m.find("rank 2 passed"), std::string::npos) << m;
    }
  }
  EXPECT_STREQ(DataTypeName(strataBfloat16), "bfloat16");
  EXPECT_STREQ(RedOpName(strataAvg), "avg");
}

QuantSpec Spec(math::QuantFormat format, uint32_t block, math::QuantScale scale, math::QuantRounding rounding) {
  QuantSpec q;
  q.enabled = true;
  q.params.format = format;
  q.params.block = block;
  q.params.scale = scale;
  q.params.rounding = rounding;
  return q;
}

TEST(CallCheck, QuantizationIsTheEncodingNotTheRounding) {
  using math::QuantFormat;
  using math::QuantRounding;
  using math::QuantScale;
  const CollDesc d{};
  const CallSignature int8 =
      MakeSignature(d, 7, Spec(QuantFormat::kInt8, 128, QuantScale::kFp32, QuantRounding::kNearest));
  // Rounding and seed do not change how the bytes are read: stochastic int8 agrees with nearest.
  const CallSignature int8Stochastic =
      MakeSignature(d, 7, Spec(QuantFormat::kInt8, 128, QuantScale::kFp32, QuantRounding::kStochastic));
  EXPECT_TRUE(CompareSignatures({int8, int8Stochastic}).ok());
  // bf16 carries no scale: the scale format a spec names is ignored there.
  const CallSignature bf16a =
      MakeSignature(d, 7, Spec(QuantFormat::kBf16, 64, QuantScale::kFp32, QuantRounding::kNearest));
  const CallSignature bf16b =
      MakeSignature(d, 7, Spec(QuantFormat::kBf16, 64, QuantScale::kFp16, QuantRounding::kNearest));
  EXPECT_TRUE(CompareSignatures({bf16a, bf16b}).ok());

  const struct {
    CallSignature other;
    const char* shown;
  } cases[] = {
      {MakeSignature(d, 7, Spec(QuantFormat::kFp8E4M3, 128, QuantScale::kFp32, QuantRounding::kNearest)),
       "fp8e4m3:128:fp32"},
      {MakeSignature(d, 7, Spec(QuantFormat::kInt8, 256, QuantScale::kFp32, QuantRounding::kNearest)), "int8:256:fp32"},
      {MakeSignature(d, 7, Spec(QuantFormat::kInt8, 128, QuantScale::kFp16, QuantRounding::kNearest)), "int8:128:fp16"},
      {bf16a, "bf16:64"},
      {MakeSignature(d, 7), "none"},
  };
  for (const auto& c : cases) {
    const Status st = CompareSignatures({int8, int8, c.other});
    ASSERT_FALSE(st.ok()) << c.shown;
    EXPECT_EQ(st.code(), strataInvalidUsage);
    EXPECT_NE(st.message().find("disagree on the quantization"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("ranks 0,1 passed int8:128:fp32"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(std::string("rank 2 passed ") + c.shown + ""), std::string::npos) << st.message();
  }
}

TEST(CallCheck, EveryWireByteOfTheQuantizationIsNamed) {
  for (int v = 0; v < 256; ++v) {
    CallSignature odd = MakeSignature(CollDesc{}, 7);
    odd.quantFormat = static_cast<uint8_t>(v);
    odd.quantBlock = 128;
    odd.quantScale = static_cast<uint8_t>(v);
    const Status st = CompareSignatures({MakeSignature(CollDesc{}, 7), odd});
    if (v == 0) {
      EXPECT_TRUE(st.ok());
      continue;
    }
    ASSERT_FALSE(st.ok()) << v;
    const std::string& m = st.message();
    EXPECT_NE(m.find("disagree on the quantization"), std::string::npos) << m;
    if (v > math::kNumQuantFormats) {
      EXPECT_NE(m.find("unknown-quantization-" + std::to_string(v)), std::string::npos) << m;
    }
  }
}

}  // namespace
}  // namespace strata
