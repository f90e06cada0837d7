#include "xal_common/reduce.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

// Every buffer both a source and a destination (the shared-tensor
// allreduce's pattern), 1 to 4 of them, over more than one block.
TEST(Reduce, EveryBufferIsSourceAndDestination) {
  constexpr size_t kCount = 2500;  // two full blocks and a partial one
  for (size_t n = 1; n <= 4; ++n) {
    for (xal_op_t op : {XAL_OP_SUM, XAL_OP_PROD, XAL_OP_MIN, XAL_OP_MAX}) {
      std::vector<std::vector<int64_t>> bufs(n, std::vector<int64_t>(kCount));
      for (size_t q = 0; q < n; ++q)
        for (size_t i = 0; i < kCount; ++i)
          bufs[q][i] = static_cast<int64_t>((i * 7 + q * 13) % 11) - 5;
      std::vector<int64_t> want(kCount);
      for (size_t i = 0; i < kCount; ++i) {
        int64_t v = bufs[0][i];
        for (size_t q = 1; q < n; ++q) {
          const int64_t x = bufs[q][i];
          v = op == XAL_OP_SUM ? v + x : op == XAL_OP_PROD ? v * x
              : op == XAL_OP_MIN ? std::min(v, x) : std::max(v, x);
        }
        want[i] = v;
      }
      std::vector<void*> dsts;
      std::vector<const void*> srcs;
      for (auto& b : bufs) dsts.push_back(b.data()), srcs.push_back(b.data());
      reduce(XAL_DTYPE_I64, op, dsts, srcs, kCount, static_cast<uint32_t>(n));
      for (size_t q = 0; q < n; ++q) ASSERT_EQ(bufs[q], want) << "n " << n << " op " << op;
    }
    std::vector<std::vector<float>> f(n, std::vector<float>(kCount));
    for (size_t q = 0; q < n; ++q)
      for (size_t i = 0; i < kCount; ++i) f[q][i] = static_cast<float>(q + 1) * 0.25f + static_cast<float>(i % 97);
    std::vector<void*> dsts;
    std::vector<const void*> srcs;
    for (auto& b : f) dsts.push_back(b.data()), srcs.push_back(b.data());
    reduce(XAL_DTYPE_F32, XAL_OP_AVG, dsts, srcs, kCount, static_cast<uint32_t>(n));
    const float quarters = static_cast<float>(n * (n + 1) / 2) * 0.25f;
    for (size_t q = 0; q < n; ++q)
      for (size_t i = 0; i < kCount; ++i)
        ASSERT_FLOAT_EQ(f[q][i], (quarters + static_cast<float>(n) * static_cast<float>(i % 97)) /
                                     static_cast<float>(n))
            << "n " << n << " i " << i;
  }
}
