// The backend through its table: modules, kernels and xal's own reduction
// kernels.
#include "table_harness.h"
#include "xal_opencl.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace xal::opencl::testing {
namespace {

using OpenclKernel = OpenclTable;

constexpr const char kSaxpy[] = R"(
__kernel void saxpy(__global float* y, __global const float* x, float a, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
__kernel void block_sum(__global const int* in, __global int* out, __local int* tmp) {
  size_t l = get_local_id(0);
  tmp[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) {
    int s = 0;
    for (size_t i = 0; i < get_local_size(0); ++i) s += tmp[i];
    out[get_group_id(0)] = s;
  }
}
)";

TEST_F(OpenclKernel, SaxpyFromSourceAtAnOffset) {
  xal_bmodule_t* m = nullptr;
  ASSERT_EQ(t->module_load(dev, XAL_MODULE_FORMAT_OPENCL_C, kSaxpy, sizeof(kSaxpy), &m),
            XAL_SUCCESS)
      << last_error().message;
  xal_bkernel_t* k = nullptr;
  ASSERT_EQ(t->kernel_get(m, "saxpy", &k), XAL_SUCCESS) << last_error().message;
  constexpr uint32_t kN = 1000;
  constexpr size_t kOffsetFloats = 256;  // 1 KiB into the allocation
  std::vector<float> x(kN), y(kN);
  for (uint32_t i = 0; i < kN; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  xal_devptr_t dx = 0, dy = 0;
  ASSERT_EQ(t->mem_alloc(dev, kN * 4, &dx), XAL_SUCCESS);
  ASSERT_EQ(t->mem_alloc(dev, (kN + kOffsetFloats) * 4, &dy), XAL_SUCCESS);
  const xal_devptr_t y_at = dy + kOffsetFloats * 4;
  ASSERT_EQ(t->memcpy_htod(stream, dx, x.data(), kN * 4), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_htod(stream, y_at, y.data(), kN * 4), XAL_SUCCESS);
  float a = 2.0f;
  uint32_t n = kN;
  void* args[] = {const_cast<xal_devptr_t*>(&y_at), &dx, &a, &n};
  const size_t sizes[] = {8, 8, sizeof(float), sizeof(uint32_t)};
  xal_launch_config_t cfg{};
  cfg.struct_size = sizeof(cfg);
  cfg.grid[0] = (kN + 63) / 64;
  cfg.grid[1] = cfg.grid[2] = 1;
  cfg.block[0] = 64;
  cfg.block[1] = cfg.block[2] = 1;
  cfg.arg_sizes = sizes;
  ASSERT_EQ(t->kernel_launch(stream, k, &cfg, args, 4), XAL_SUCCESS) << last_error().message;
  std::vector<float> out(kN);
  ASSERT_EQ(t->memcpy_dtoh(stream, out.data(), y_at, kN * 4), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  for (uint32_t i = 0; i < kN; ++i) ASSERT_FLOAT_EQ(out[i], 2.0f * i + 1.0f) << i;

  // Bad launches are refused with a reason.
  EXPECT_EQ(t->kernel_launch(stream, k, &cfg, args, 3), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("takes 4 arguments"), std::string::npos);
  xal_launch_config_t no_sizes = cfg;
  no_sizes.arg_sizes = nullptr;
  EXPECT_EQ(t->kernel_launch(stream, k, &no_sizes, args, 4), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("arg_sizes"), std::string::npos);
  const size_t bad_sizes[] = {4, 8, sizeof(float), sizeof(uint32_t)};
  xal_launch_config_t bad = cfg;
  bad.arg_sizes = bad_sizes;
  EXPECT_EQ(t->kernel_launch(stream, k, &bad, args, 4), XAL_ERROR_INVALID_ARGUMENT);
  xal_devptr_t stray = dy + 4;  // not sub-buffer aligned
  void* stray_args[] = {&stray, &dx, &a, &n};
  EXPECT_EQ(t->kernel_launch(stream, k, &cfg, stray_args, 4), XAL_ERROR_INVALID_ARGUMENT);
  xal_devptr_t freed = 0x12345678;
  void* freed_args[] = {&freed, &dx, &a, &n};
  EXPECT_EQ(t->kernel_launch(stream, k, &cfg, freed_args, 4), XAL_ERROR_OUT_OF_BOUNDS);

  xal_bkernel_t* missing = nullptr;
  EXPECT_EQ(t->kernel_get(m, "nope", &missing), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, CL_INVALID_KERNEL_NAME);
  EXPECT_EQ(t->mem_free(dev, dx), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev, dy), XAL_SUCCESS);
  EXPECT_EQ(t->module_unload(m), XAL_SUCCESS);
}

TEST_F(OpenclKernel, LocalMemoryArgument) {
  xal_bmodule_t* m = nullptr;
  ASSERT_EQ(t->module_load(dev, XAL_MODULE_FORMAT_OPENCL_C, kSaxpy, std::strlen(kSaxpy), &m),
            XAL_SUCCESS);
  xal_bkernel_t* k = nullptr;
  ASSERT_EQ(t->kernel_get(m, "block_sum", &k), XAL_SUCCESS);
  std::vector<int32_t> in(256);
  for (int i = 0; i < 256; ++i) in[i] = i;
  xal_devptr_t din = 0, dout = 0;
  ASSERT_EQ(t->mem_alloc(dev, 256 * 4, &din), XAL_SUCCESS);
  ASSERT_EQ(t->mem_alloc(dev, 4 * 4, &dout), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_htod(stream, din, in.data(), 256 * 4), XAL_SUCCESS);
  void* args[] = {&din, &dout, nullptr};
  const size_t sizes[] = {8, 8, 64 * sizeof(int32_t)};
  xal_launch_config_t cfg{sizeof(cfg), {4, 1, 1}, {64, 1, 1}, 0, sizes};
  ASSERT_EQ(t->kernel_launch(stream, k, &cfg, args, 3), XAL_SUCCESS) << last_error().message;
  int32_t out[4] = {};
  ASSERT_EQ(t->memcpy_dtoh(stream, out, dout, sizeof(out)), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  for (int g = 0; g < 4; ++g) EXPECT_EQ(out[g], 64 * 64 * g + 63 * 64 / 2) << g;
  cfg.shared_memory_bytes = 128;
  EXPECT_EQ(t->kernel_launch(stream, k, &cfg, args, 3), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(t->mem_free(dev, din), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev, dout), XAL_SUCCESS);
  EXPECT_EQ(t->module_unload(m), XAL_SUCCESS);
}

TEST_F(OpenclKernel, BuildFailureCarriesTheBuildLog) {
  const char bad[] = "__kernel void broken(__global int* p) { p[0] = undeclared_thing; }";
  xal_bmodule_t* m = nullptr;
  EXPECT_EQ(t->module_load(dev, XAL_MODULE_FORMAT_OPENCL_C, bad, sizeof(bad) - 1, &m),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(last_error().vendor_code, CL_BUILD_PROGRAM_FAILURE);
  EXPECT_EQ(last_error().vendor_name, "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_NE(last_error().message.find("build log"), std::string::npos) << last_error().message;
  EXPECT_NE(last_error().message.find("undeclared_thing"), std::string::npos)
      << last_error().message;
}

TEST_F(OpenclKernel, UnsupportedFormatsAreRefused) {
  const char image[] = "not a binary";
  xal_bmodule_t* m = nullptr;
  EXPECT_EQ(t->module_load(dev, XAL_MODULE_FORMAT_PTX, image, sizeof(image), &m),
            XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(last_error().message.find("PTX"), std::string::npos);
  EXPECT_EQ(t->module_load(dev, XAL_MODULE_FORMAT_OPENCL_C, image, 0, &m),
            XAL_ERROR_INVALID_ARGUMENT);
  // SPIR-V: refused with a reason where the driver takes none, else the
  // garbage image is rejected by the driver.
  const xal_status_t st = t->module_load(dev, XAL_MODULE_FORMAT_SPIRV, image, sizeof(image), &m);
  EXPECT_NE(st, XAL_SUCCESS);
  EXPECT_FALSE(last_error().message.empty());
}

TEST_F(OpenclKernel, ReduceExtensionOverDtypes) {
  auto* ext = static_cast<const xal_opencl_reduce_v1_t*>(
      t->get_extension(instance.get(), XAL_OPENCL_REDUCE_EXTENSION));
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(t->get_extension(instance.get(), "nope"), nullptr);
  constexpr size_t kN = 1001;
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(t->mem_alloc(dev, kN * 8 + 64, &a), XAL_SUCCESS);
  ASSERT_EQ(t->mem_alloc(dev, kN * 8 + 64, &b), XAL_SUCCESS);

  // f32 sum at an element offset.
  std::vector<float> fa(kN), fb(kN), fo(kN);
  for (size_t i = 0; i < kN; ++i) {
    fa[i] = 0.5f * i;
    fb[i] = 2.0f;
  }
  ASSERT_EQ(t->memcpy_htod(stream, a + 4, fa.data(), kN * 4), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_htod(stream, b, fb.data(), kN * 4), XAL_SUCCESS);
  ASSERT_EQ(ext->reduce(stream, a + 4, b, kN, XAL_DTYPE_F32, XAL_OP_SUM), XAL_SUCCESS)
      << last_error().message;
  ASSERT_EQ(ext->divide(stream, a + 4, kN, XAL_DTYPE_F32, 2), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_dtoh(stream, fo.data(), a + 4, kN * 4), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  for (size_t i = 0; i < kN; ++i) ASSERT_FLOAT_EQ(fo[i], (0.5f * i + 2.0f) / 2) << i;

  // i32 max and min, u8 prod (wrapping), i64 sum.
  std::vector<int32_t> ia(kN), ib(kN), io(kN);
  for (size_t i = 0; i < kN; ++i) {
    ia[i] = static_cast<int32_t>(i) - 500;
    ib[i] = 500 - static_cast<int32_t>(i);
  }
  ASSERT_EQ(t->memcpy_htod(stream, a, ia.data(), kN * 4), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_htod(stream, b, ib.data(), kN * 4), XAL_SUCCESS);
  ASSERT_EQ(ext->reduce(stream, a, b, kN, XAL_DTYPE_I32, XAL_OP_MAX), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_dtoh(stream, io.data(), a, kN * 4), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  for (size_t i = 0; i < kN; ++i) ASSERT_EQ(io[i], std::max(ia[i], ib[i])) << i;

  std::vector<uint8_t> ua(kN, 3), ub(kN), uo(kN);
  for (size_t i = 0; i < kN; ++i) ub[i] = static_cast<uint8_t>(i);
  ASSERT_EQ(t->memcpy_htod(stream, a, ua.data(), kN), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_htod(stream, b, ub.data(), kN), XAL_SUCCESS);
  ASSERT_EQ(ext->reduce(stream, a + 1, b + 1, kN - 1, XAL_DTYPE_U8, XAL_OP_PROD), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_dtoh(stream, uo.data(), a, kN), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(uo[0], 3);
  for (size_t i = 1; i < kN; ++i) ASSERT_EQ(uo[i], static_cast<uint8_t>(3 * ub[i])) << i;

  // f16 and bf16 sums: 1.5 + 2.25 = 3.75 is exact in both.
  const uint16_t h15 = 0x3E00, h225 = 0x4080, h375 = 0x4380;     // IEEE half
  const uint16_t b15 = 0x3FC0, b225 = 0x4010, b375 = 0x4070;     // bfloat16
  for (auto [dt, x, y, want] : {std::tuple{XAL_DTYPE_F16, h15, h225, h375},
                                std::tuple{XAL_DTYPE_BF16, b15, b225, b375}}) {
    std::vector<uint16_t> xa(kN, x), xb(kN, y), xo(kN);
    ASSERT_EQ(t->memcpy_htod(stream, a, xa.data(), kN * 2), XAL_SUCCESS);
    ASSERT_EQ(t->memcpy_htod(stream, b, xb.data(), kN * 2), XAL_SUCCESS);
    ASSERT_EQ(ext->reduce(stream, a, b, kN, dt, XAL_OP_SUM), XAL_SUCCESS) << last_error().message;
    ASSERT_EQ(t->memcpy_dtoh(stream, xo.data(), a, kN * 2), XAL_SUCCESS);
    ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
    for (size_t i = 0; i < kN; ++i) ASSERT_EQ(xo[i], want) << dt << " " << i;
  }

  // Bad input.
  EXPECT_EQ(ext->reduce(stream, a + 1, b, 4, XAL_DTYPE_F32, XAL_OP_SUM), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ext->reduce(stream, a, b, 4, XAL_DTYPE_F32, XAL_OP_AVG), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ext->reduce(stream, a, b, kN * 8, XAL_DTYPE_F64, XAL_OP_SUM) != XAL_SUCCESS, true);
  EXPECT_EQ(ext->divide(stream, a, 4, XAL_DTYPE_I32, 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ext->reduce(stream, a, b, 4, 99u, XAL_OP_SUM),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev, b), XAL_SUCCESS);
}

// The divisor is not narrowed to the element type: 200 and 256 for 8-bit
// types, 3e9 for int.
TEST_F(OpenclKernel, DivideByLargeDivisors) {
  auto* ext = static_cast<const xal_opencl_reduce_v1_t*>(
      t->get_extension(instance.get(), XAL_OPENCL_REDUCE_EXTENSION));
  ASSERT_NE(ext, nullptr);
  xal_devptr_t a = 0;
  ASSERT_EQ(t->mem_alloc(dev, 64, &a), XAL_SUCCESS);
  const std::vector<int8_t> i8 = {-128, 127, 100, -100, -1, 0};
  const std::vector<uint8_t> u8 = {255, 200, 199, 1, 0, 128};
  for (uint32_t divisor : {2u, 200u, 256u}) {
    std::vector<int8_t> io(i8.size());
    std::vector<uint8_t> uo(u8.size());
    ASSERT_EQ(t->memcpy_htod(stream, a, i8.data(), i8.size()), XAL_SUCCESS);
    ASSERT_EQ(ext->divide(stream, a, i8.size(), XAL_DTYPE_I8, divisor), XAL_SUCCESS);
    ASSERT_EQ(t->memcpy_dtoh(stream, io.data(), a, io.size()), XAL_SUCCESS);
    ASSERT_EQ(t->memcpy_htod(stream, a + 32, u8.data(), u8.size()), XAL_SUCCESS);
    ASSERT_EQ(ext->divide(stream, a + 32, u8.size(), XAL_DTYPE_U8, divisor), XAL_SUCCESS);
    ASSERT_EQ(t->memcpy_dtoh(stream, uo.data(), a + 32, uo.size()), XAL_SUCCESS);
    ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS) << last_error().message;
    for (size_t i = 0; i < i8.size(); ++i) {
      EXPECT_EQ(io[i], static_cast<int8_t>(i8[i] / static_cast<int32_t>(divisor)))
          << "i8 " << int{i8[i]} << " / " << divisor;
      EXPECT_EQ(uo[i], static_cast<uint8_t>(u8[i] / divisor))
          << "u8 " << int{u8[i]} << " / " << divisor;
    }
  }
  const std::vector<int32_t> i32 = {INT32_MIN, INT32_MAX, -7, 7};
  std::vector<int32_t> o32(i32.size());
  ASSERT_EQ(t->memcpy_htod(stream, a, i32.data(), i32.size() * 4), XAL_SUCCESS);
  ASSERT_EQ(ext->divide(stream, a, i32.size(), XAL_DTYPE_I32, 3000000000u), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_dtoh(stream, o32.data(), a, o32.size() * 4), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  for (size_t i = 0; i < i32.size(); ++i) EXPECT_EQ(o32[i], 0) << i32[i];
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS);
}

}  // namespace
}  // namespace xal::opencl::testing
