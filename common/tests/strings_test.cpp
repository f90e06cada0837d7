#include "xal_common/strings.hpp"

#include <gtest/gtest.h>

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
