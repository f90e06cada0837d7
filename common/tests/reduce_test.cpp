#include "xal_common/reduce.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace xal::common;

namespace {

template <typename T>
std::vector<T> run(xal_dtype_t dt, xal_op_t op, std::vector<std::vector<T>> in,
                   uint32_t div = 0) {
  std::vector<const void*> srcs;
  for (auto& v : in) srcs.push_back(v.data());
  std::vector<T> out(in[0].size());
  void* dst = out.data();
  reduce(dt, op, std::span<void* const>(&dst, 1), srcs, out.size(),
         div ? div : static_cast<uint32_t>(in.size()));
  return out;
}

}  // namespace

TEST(Reduce, IntegerOps) {
  std::vector<std::vector<int32_t>> in = {{1, -2, 3}, {4, 5, -6}, {7, 8, 9}};
  EXPECT_EQ(run<int32_t>(XAL_DTYPE_I32, XAL_OP_SUM, in), (std::vector<int32_t>{12, 11, 6}));
  EXPECT_EQ(run<int32_t>(XAL_DTYPE_I32, XAL_OP_PROD, in), (std::vector<int32_t>{28, -80, -162}));
  EXPECT_EQ(run<int32_t>(XAL_DTYPE_I32, XAL_OP_MIN, in), (std::vector<int32_t>{1, -2, -6}));
  EXPECT_EQ(run<int32_t>(XAL_DTYPE_I32, XAL_OP_MAX, in), (std::vector<int32_t>{7, 8, 9}));
  // Signed min/max compare as signed, unsigned as unsigned; sums wrap.
  std::vector<std::vector<int8_t>> i8 = {{-128, 127}, {1, 1}};
  EXPECT_EQ(run<int8_t>(XAL_DTYPE_I8, XAL_OP_MIN, i8), (std::vector<int8_t>{-128, 1}));
  EXPECT_EQ(run<int8_t>(XAL_DTYPE_I8, XAL_OP_SUM, i8), (std::vector<int8_t>{-127, -128}));
  std::vector<std::vector<uint64_t>> u64 = {{~0ull, 3}, {2, 5}};
  EXPECT_EQ(run<uint64_t>(XAL_DTYPE_U64, XAL_OP_MAX, u64), (std::vector<uint64_t>{~0ull, 5}));
  EXPECT_EQ(run<uint64_t>(XAL_DTYPE_U64, XAL_OP_SUM, u64), (std::vector<uint64_t>{1, 8}));
}

TEST(Reduce, FloatOpsAndAvg) {
  std::vector<std::vector<float>> in(3, std::vector<float>(3000));
  for (size_t r = 0; r < 3; ++r)
    for (size_t i = 0; i < 3000; ++i) in[r][i] = static_cast<float>(r + 1) * 0.5f + static_cast<float>(i);
  const auto sum = run<float>(XAL_DTYPE_F32, XAL_OP_SUM, in);
  const auto avg = run<float>(XAL_DTYPE_F32, XAL_OP_AVG, in);
  for (size_t i = 0; i < 3000; ++i) {
    EXPECT_FLOAT_EQ(sum[i], 3.0f + 3.0f * static_cast<float>(i));
    EXPECT_FLOAT_EQ(avg[i], 1.0f + static_cast<float>(i));
  }
  std::vector<std::vector<double>> d = {{1.5, -2}, {2, 4}};
  EXPECT_EQ(run<double>(XAL_DTYPE_F64, XAL_OP_PROD, d), (std::vector<double>{3, -8}));
}

TEST(Reduce, InPlaceAndManyDestinations) {
  std::vector<float> a(5000, 1.0f), b(5000, 2.0f), c(5000, 0.0f);
  void* dsts[] = {a.data(), b.data(), c.data()};
  const void* srcs[] = {a.data(), b.data()};
  reduce(XAL_DTYPE_F32, XAL_OP_SUM, dsts, srcs, a.size(), 2);
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i], 3.0f);
    ASSERT_EQ(b[i], 3.0f);
    ASSERT_EQ(c[i], 3.0f);
  }
}

TEST(Reduce, Halves) {
  EXPECT_EQ(float_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_f16(1e6f), 0x7c00);
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_FLOAT_EQ(f16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(std::numeric_limits<float>::quiet_NaN()))));
  for (uint32_t h = 0; h < 0x7c00; ++h)  // every finite positive half round-trips
    ASSERT_EQ(float_to_f16(f16_to_float(static_cast<uint16_t>(h))), h) << h;
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_FLOAT_EQ(bf16_to_float(0x4040), 3.0f);
  std::vector<std::vector<uint16_t>> in = {{float_to_f16(1.5f)}, {float_to_f16(2.25f)}};
  EXPECT_FLOAT_EQ(f16_to_float(run<uint16_t>(XAL_DTYPE_F16, XAL_OP_SUM, in)[0]), 3.75f);
  std::vector<std::vector<uint16_t>> bf = {{float_to_bf16(4.0f)}, {float_to_bf16(8.0f)}};
  EXPECT_FLOAT_EQ(bf16_to_float(run<uint16_t>(XAL_DTYPE_BF16, XAL_OP_AVG, bf)[0]), 6.0f);
}

TEST(Reduce, Checks) {
  std::string why;
  EXPECT_EQ(check_dtype_op(XAL_DTYPE_F32, XAL_OP_AVG, &why), XAL_SUCCESS);
  EXPECT_EQ(check_dtype_op(XAL_DTYPE_I32, XAL_OP_AVG, &why), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(why.find("avg"), std::string::npos);
  EXPECT_EQ(check_dtype_op(42, XAL_OP_SUM, &why), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(check_dtype_op(XAL_DTYPE_U8, 9, &why), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dtype_size(XAL_DTYPE_BF16), 2u);
  EXPECT_STREQ(dtype_name(XAL_DTYPE_BF16), "bf16");
  EXPECT_STREQ(op_name(XAL_OP_MAX), "max");
}
