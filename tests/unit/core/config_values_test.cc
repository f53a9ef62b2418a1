// Byte sizes as knobs take them (ParseBytes): digits and an optional K/M/G and B, nothing else, and never a
// value that wrapped. Expected values are written out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/config.h"

namespace strata {
namespace {

TEST(ParseBytes, Accepts) {
  const struct {
    const char* text;
    uint64_t want;
  } cases[] = {{"0", 0},           {"123", 123},         {"64K", 65536},          {"64k", 65536},
               {"1M", 1048576},    {"1MB", 1048576},     {"2G", 2147483648ull},   {"3gb", 3221225472ull},
               {"007", 7},         {"18446744073709551615", UINT64_MAX},        {"17179869183G", 18446744072635809792ull}};
  for (const auto& c : cases) {
    uint64_t got = 1;
    EXPECT_TRUE(ParseBytes(c.text, &got)) << c.text;
    EXPECT_EQ(got, c.want) << c.text;
  }
}

// Before the strict reader, strtoull took a sign, leading spaces, and wrapped on overflow, so "-1" was
// 2^64-1 bytes; text after a NUL was ignored.
TEST(ParseBytes, Refuses) {
  for (const std::string& text :
       {std::string(""), std::string("-1"), std::string("+5"), std::string(" 5"), std::string("5 "), std::string("K"),
        std::string("5KK"), std::string("5T"), std::string("0x10"), std::string("1.5M"),
        std::string("18446744073709551616"), std::string("17179869184G"), std::string("99999999999999999999999"),
        std::string("1\0K", 3), std::string("1B", 1) + std::string("\0", 1)}) {
    uint64_t got = 42;
    EXPECT_FALSE(ParseBytes(text, &got)) << "'" << text << "' (" << text.size() << " bytes)";
    EXPECT_EQ(got, 42u) << text;
  }
}

// A malformed knob falls back to its default (with a WARN line) instead of wrapping into range: an int knob
// of 2^32 + 2 used to read as 2.
TEST(ConfigKnobs, MalformedValuesFallBackToTheDefault) {
  const struct {
    const char* value;
    int64_t want;
  } ints[] = {{"12", 12}, {"4294967298", 8}, {"12abc", 8}, {"-9223372036854775809", 8}, {"0x10", 8}, {"-3", -3}};
  for (const auto& c : ints) {
    setenv("STRATA_NSLOTS", c.value, 1);
    EXPECT_EQ(ConfigInt("STRATA_NSLOTS"), c.want) << c.value;
  }
  unsetenv("STRATA_NSLOTS");
  EXPECT_EQ(ConfigInt("STRATA_NSLOTS"), 8);

  const struct {
    const char* value;
    uint64_t want;
  } sizes[] = {{"64K", 65536}, {"-1", 131072}, {"1T", 131072}, {"18446744073709551616", 131072}};
  for (const auto& c : sizes) {
    setenv("STRATA_SLOT_BYTES", c.value, 1);
    EXPECT_EQ(ConfigBytes("STRATA_SLOT_BYTES"), c.want) << c.value;
  }
  unsetenv("STRATA_SLOT_BYTES");
  EXPECT_EQ(ConfigBytes("STRATA_SLOT_BYTES"), 131072u);
}

}  // namespace
}  // namespace strata
