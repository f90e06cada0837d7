// Built-in kernels: module loading, lookup, launches and argument checks.
#include <cstring>
#include <latch>
#include <string>
#include <vector>

#include "mock_harness.h"

namespace xal::mock {
namespace {

using test::Instance;
using test::table;

constexpr char kImage[] = "fill_u32\nsaxpy_f32 # y += a*x\n\n  scale_f32 \niota_u32\nadd_f32\nsleep_us\n";

xal_launch_config_t config(uint32_t grid = 4, uint32_t block = 64) {
  xal_launch_config_t c{};
  c.struct_size = sizeof(c);
  c.grid[0] = grid;
  c.grid[1] = c.grid[2] = 1;
  c.block[0] = block;
  c.block[1] = c.block[2] = 1;
  return c;
}

struct Kernels {
  xal_bmodule_t* module = nullptr;
  xal_bkernel_t* get(const char* name) {
    xal_bkernel_t* k = nullptr;
    EXPECT_EQ(table().kernel_get(module, name, &k), XAL_SUCCESS) << name;
    return k;
  }
};

TEST(Kernel, FillSaxpyScaleIotaAdd) {
  Instance inst(R"([{"profile": "h100-sxm-80g", "memory": "64MiB"}])");
  xal_bdevice_t* d = inst.device(0);
  xal_bstream_t* s = inst.stream(0);
  Kernels k;
  ASSERT_EQ(table().module_load(d, XAL_MODULE_FORMAT_NATIVE, kImage, sizeof kImage - 1, &k.module),
            XAL_SUCCESS) << test::last_error().message;
  const uint64_t n = 300001;  // above the parallel threshold, odd
  const xal_devptr_t x = inst.alloc(0, n * 4);
  const xal_devptr_t y = inst.alloc(0, n * 4);
  const xal_devptr_t z = inst.alloc(0, n * 4);
  const auto cfg = config();
  // x = 2.0f (as bits), y = 1.0f
  float two = 2.0f, one = 1.0f;
  uint32_t two_bits, one_bits;
  std::memcpy(&two_bits, &two, 4);
  std::memcpy(&one_bits, &one, 4);
  void* fill_x[] = {const_cast<xal_devptr_t*>(&x), &two_bits, const_cast<uint64_t*>(&n)};
  void* fill_y[] = {const_cast<xal_devptr_t*>(&y), &one_bits, const_cast<uint64_t*>(&n)};
  ASSERT_EQ(table().kernel_launch(s, k.get("fill_u32"), &cfg, fill_x, 3), XAL_SUCCESS);
  ASSERT_EQ(table().kernel_launch(s, k.get("fill_u32"), &cfg, fill_y, 3), XAL_SUCCESS);
  float a = 3.0f;
  void* saxpy[] = {const_cast<xal_devptr_t*>(&y), const_cast<xal_devptr_t*>(&x), &a,
                   const_cast<uint64_t*>(&n)};
  ASSERT_EQ(table().kernel_launch(s, k.get("saxpy_f32"), &cfg, saxpy, 4), XAL_SUCCESS);
  float half = 0.5f;
  void* scale[] = {const_cast<xal_devptr_t*>(&y), &half, const_cast<uint64_t*>(&n)};
  ASSERT_EQ(table().kernel_launch(s, k.get("scale_f32"), &cfg, scale, 3), XAL_SUCCESS);
  void* add[] = {const_cast<xal_devptr_t*>(&z), const_cast<xal_devptr_t*>(&x),
                 const_cast<xal_devptr_t*>(&y), const_cast<uint64_t*>(&n)};
  ASSERT_EQ(table().kernel_launch(s, k.get("add_f32"), &cfg, add, 4), XAL_SUCCESS);
  std::vector<float> ys(n), zs(n);
  ASSERT_EQ(table().memcpy_dtoh(s, ys.data(), y, n * 4), XAL_SUCCESS);
  ASSERT_EQ(table().memcpy_dtoh(s, zs.data(), z, n * 4), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  for (uint64_t i = 0; i < n; i += 997) {
    ASSERT_FLOAT_EQ(ys[i], 3.5f) << i;  // (1 + 3*2) / 2
    ASSERT_FLOAT_EQ(zs[i], 5.5f) << i;
  }
  EXPECT_FLOAT_EQ(ys[n - 1], 3.5f);
  uint32_t start = 100;
  const uint64_t m = 1000;
  void* iota[] = {const_cast<xal_devptr_t*>(&x), &start, const_cast<uint64_t*>(&m)};
  ASSERT_EQ(table().kernel_launch(s, k.get("iota_u32"), &cfg, iota, 3), XAL_SUCCESS);
  std::vector<uint32_t> xs(m + 1);
  ASSERT_EQ(table().memcpy_dtoh(s, xs.data(), x, (m + 1) * 4), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  for (uint32_t i = 0; i < m; ++i) ASSERT_EQ(xs[i], 100 + i);
  EXPECT_EQ(xs[m], two_bits);  // untouched past count
  EXPECT_EQ(table().module_unload(k.module), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

TEST(Kernel, SleepKeepsTheStreamBusy) {
  Instance inst("1*l4");
  xal_bstream_t* s = inst.stream(0);
  Kernels k;
  const char image[] = "sleep_us";
  ASSERT_EQ(table().module_load(inst.device(0), XAL_MODULE_FORMAT_NATIVE, image, 8, &k.module),
            XAL_SUCCESS);
  uint64_t us = 20000;
  void* args[] = {&us};
  const auto cfg = config(1, 1);
  std::latch gate(1);
  auto wait = [](void* p) { static_cast<std::latch*>(p)->wait(); };
  xal_bevent_t* start = inst.event(0);
  xal_bevent_t* end = inst.event(0);
  ASSERT_EQ(table().stream_enqueue_host_func(s, wait, &gate), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(start, s), XAL_SUCCESS);
  ASSERT_EQ(table().kernel_launch(s, k.get("sleep_us"), &cfg, args, 1), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(end, s), XAL_SUCCESS);
  EXPECT_EQ(table().stream_query(s), XAL_NOT_READY);
  gate.count_down();
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(table().stream_query(s), XAL_SUCCESS);
  float ms = 0;
  ASSERT_EQ(table().event_elapsed_ms(start, end, &ms), XAL_SUCCESS);
  EXPECT_GE(ms, 19.9f);
  EXPECT_EQ(table().event_destroy(start), XAL_SUCCESS);
  EXPECT_EQ(table().event_destroy(end), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

TEST(Kernel, LoadErrors) {
  Instance inst("2*l4");
  xal_bdevice_t* d = inst.device(0);
  xal_bmodule_t* m = nullptr;
  EXPECT_EQ(table().module_load(d, XAL_MODULE_FORMAT_PTX, ".version 8.0", 12, &m),
            XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(test::last_error().message.find("NATIVE"), std::string::npos);
  EXPECT_EQ(table().module_load(d, XAL_MODULE_FORMAT_SPIRV, "x", 1, &m), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(table().module_load(d, XAL_MODULE_FORMAT_NATIVE, "fill_u32\nwarp_shuffle", 21, &m),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("line 2"), std::string::npos);
  EXPECT_NE(test::last_error().message.find("warp_shuffle"), std::string::npos);
  EXPECT_EQ(table().module_load(d, XAL_MODULE_FORMAT_NATIVE, "\n # nothing\n", 12, &m),
            XAL_ERROR_INVALID_ARGUMENT);
  // A binary image: said whole, not cut at its first NUL.
  EXPECT_EQ(table().module_load(d, XAL_MODULE_FORMAT_NATIVE, "fill\0u32", 8, &m),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("byte 4 is NUL"), std::string::npos)
      << test::last_error().message;
  EXPECT_NE(test::last_error().message.find("one built-in kernel name per line"), std::string::npos)
      << test::last_error().message;
  EXPECT_EQ(table().module_load(d, XAL_MODULE_FORMAT_NATIVE, nullptr, 4, &m),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().module_load(d, XAL_MODULE_FORMAT_NATIVE, "fill_u32", 0, &m),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().module_load(d, XAL_MODULE_FORMAT_NATIVE, "fill_u32", 8, nullptr),
            XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(table().module_load(d, XAL_MODULE_FORMAT_NATIVE, "fill_u32", 8, &m), XAL_SUCCESS);
  xal_bkernel_t* k = nullptr;
  EXPECT_EQ(table().kernel_get(m, "saxpy_f32", &k), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("not listed"), std::string::npos);
  EXPECT_EQ(table().kernel_get(m, "gemm", &k), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().kernel_get(m, nullptr, &k), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().kernel_get(m, "fill_u32", nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().module_unload(m), XAL_SUCCESS);
}

TEST(Kernel, LaunchErrors) {
  Instance inst(R"([{"profile": "l4", "memory": "1MiB", "count": 2}])");
  xal_bstream_t* s = inst.stream(0);
  xal_bstream_t* s1 = inst.stream(1);
  Kernels k;
  ASSERT_EQ(table().module_load(inst.device(0), XAL_MODULE_FORMAT_NATIVE, "fill_u32", 8, &k.module),
            XAL_SUCCESS);
  xal_bkernel_t* fill = k.get("fill_u32");
  const xal_devptr_t p = inst.alloc(0, 1024);
  uint32_t v = 1;
  uint64_t n = 256;
  xal_devptr_t dst = p;
  void* args[] = {&dst, &v, &n};
  auto cfg = config();
  EXPECT_EQ(table().kernel_launch(s, fill, &cfg, args, 2), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("expected 3 arguments"), std::string::npos);
  EXPECT_EQ(table().kernel_launch(s, fill, nullptr, args, 3), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().kernel_launch(s, fill, &cfg, nullptr, 3), XAL_ERROR_INVALID_ARGUMENT);
  void* null_arg[] = {&dst, nullptr, &n};
  EXPECT_EQ(table().kernel_launch(s, fill, &cfg, null_arg, 3), XAL_ERROR_INVALID_ARGUMENT);
  auto zero = config(0);
  EXPECT_EQ(table().kernel_launch(s, fill, &zero, args, 3), XAL_ERROR_INVALID_ARGUMENT);
  const size_t wrong_sizes[] = {8, 8, 8};
  auto sized = config();
  sized.arg_sizes = wrong_sizes;
  EXPECT_EQ(table().kernel_launch(s, fill, &sized, args, 3), XAL_ERROR_INVALID_ARGUMENT);
  const size_t right_sizes[] = {8, 4, 8};
  sized.arg_sizes = right_sizes;
  EXPECT_EQ(table().kernel_launch(s, fill, &sized, args, 3), XAL_SUCCESS);
  n = 1u << 20;  // past the end of the device's memory
  EXPECT_EQ(table().kernel_launch(s, fill, &cfg, args, 3), XAL_ERROR_OUT_OF_BOUNDS);
  n = UINT64_MAX / 2;
  EXPECT_EQ(table().kernel_launch(s, fill, &cfg, args, 3), XAL_ERROR_INVALID_ARGUMENT);
  n = 4;
  EXPECT_EQ(table().kernel_launch(s1, fill, &cfg, args, 3), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(static_cast<uint32_t*>(test::host(inst.device(0), p, 4))[0], 1u);
  EXPECT_EQ(table().module_unload(k.module), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s1), XAL_SUCCESS);
}

}  // namespace
}  // namespace xal::mock
