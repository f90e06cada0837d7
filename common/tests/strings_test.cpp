#include "xal_common/strings.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace xal::common;

TEST(ParseBytes, UnitsAndNumbers) {
  EXPECT_EQ(parse_bytes("0"), 0u);
  EXPECT_EQ(parse_bytes("123"), 123u);
  EXPECT_EQ(parse_bytes("8GiB"), 8ull << 30);
  EXPECT_EQ(parse_bytes("8G"), 8ull << 30);
  EXPECT_EQ(parse_bytes("8 gib"), 8ull << 30);
  EXPECT_EQ(parse_bytes("2GB"), 2000000000ull);
  EXPECT_EQ(parse_bytes("1.5KiB"), 1536u);
  EXPECT_EQ(parse_bytes(" 4 MiB "), 4ull << 20);
  EXPECT_EQ(parse_bytes("1TiB"), 1ull << 40);
  EXPECT_EQ(parse_bytes("10B"), 10u);
}

TEST(ParseBytes, RejectsMalformed) {
  std::string err;
  EXPECT_FALSE(parse_bytes("", &err));
  EXPECT_FALSE(err.empty());
  EXPECT_FALSE(parse_bytes("GiB", &err));
  EXPECT_FALSE(parse_bytes("12XB", &err));
  EXPECT_NE(err.find("unit"), std::string::npos);
  EXPECT_FALSE(parse_bytes("-5", &err));
  EXPECT_FALSE(parse_bytes("99999999999999999999999", &err));
  EXPECT_FALSE(parse_bytes("20000000TiB", &err));
}

TEST(Strings, SplitTrimLower) {
  EXPECT_EQ(split("a,b,,c", ","), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split("a,,b", ",", true), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(split("mock:0,1;cuda:*", ";"),
            (std::vector<std::string>{"mock:0,1", "cuda:*"}));
  EXPECT_EQ(trim("  x y \n"), "x y");
  EXPECT_EQ(to_lower("AbC"), "abc");
  EXPECT_TRUE(starts_with("libxal_backend_mock.so", "libxal_backend_"));
  EXPECT_EQ(parse_uint("42"), 42u);
  EXPECT_FALSE(parse_uint("4x2"));
  EXPECT_FALSE(parse_uint("99999999999999999999"));
  char buf[4];
  copy_string(buf, "abcdef");
  EXPECT_STREQ(buf, "abc");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
}

TEST(CopyString, TruncatesOnAUtf8CharacterBoundary) {
  // "ü" is 2 bytes (C3 BC): with 4 bytes of room, "aü" fits (3 bytes) but
  // "aüü" would leave C3 alone; the second character is left out whole.
  char two[4];
  copy_string(two, "a\xC3\xBC\xC3\xBC");
  EXPECT_STREQ(two, "a\xC3\xBC");
  char split2[3];
  copy_string(split2, "a\xC3\xBC");
  EXPECT_STREQ(split2, "a");
  // "€" is 3 bytes (E2 82 AC): cut after its first and its second byte.
  char split3a[3];
  copy_string(split3a, "a\xE2\x82\xAC");
  EXPECT_STREQ(split3a, "a");
  char split3b[4];
  copy_string(split3b, "ab\xE2\x82\xAC");
  EXPECT_STREQ(split3b, "ab");
  char fits3[5];
  copy_string(fits3, "a\xE2\x82\xAC" "b");
  EXPECT_STREQ(fits3, "a\xE2\x82\xAC");
  // A 4-byte character ("😀", F0 9F 98 80) cut after its third byte.
  char split4[5];
  copy_string(split4, "a\xF0\x9F\x98\x80");
  EXPECT_STREQ(split4, "a");
  // What fits is copied unchanged, even bytes that are not UTF-8.
  char raw[8];
  copy_string(raw, "x\xC3");
  EXPECT_STREQ(raw, "x\xC3");
  // 40 x "ü" into 64 bytes: 31 characters, never a lone lead byte.
  std::string many;
  for (int i = 0; i < 40; ++i) many += "\xC3\xBC";
  char name[64];
  copy_string(name, many);
  EXPECT_EQ(std::string(name), many.substr(0, 62));
}
