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

}  // namespace
}  // namespace strata
