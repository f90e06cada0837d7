// Modules and kernels, forwarded to the backend.
#include <vector>

#include "test_util.hpp"

using namespace xal_test;

using Module = Xal;

namespace {
const char kImage[] = "testdev-kernels";
}

TEST_F(Module, LoadGetLaunch) {
  xal_module_t m;
  ASSERT_XAL_OK(xal_module_load(dev0, XAL_MODULE_FORMAT_NATIVE, kImage, sizeof kImage - 1, &m));
  xal_kernel_t k, again;
  ASSERT_XAL_OK(xal_kernel_get(m, "fill_u32", &k));
  ASSERT_XAL_OK(xal_kernel_get(m, "fill_u32", &again));
  EXPECT_EQ(k, again);
  const uint64_t n = 1000;
  xal_devptr_t p;
  ASSERT_XAL_OK(xal_mem_alloc(dev0, n * 4, &p));
  uint32_t value = 0xfeedu;
  uint64_t count = n;
  void* args[] = {&p, &value, &count};
  xal_launch_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.grid[0] = cfg.grid[1] = cfg.grid[2] = 1;
  cfg.block[0] = 64;
  cfg.block[1] = cfg.block[2] = 1;
  ASSERT_XAL_OK(xal_kernel_launch(stream0, k, &cfg, args, 3));
  std::vector<uint32_t> out(n);
  ASSERT_XAL_OK(xal_memcpy_dtoh(stream0, out.data(), p, n * 4));
  ASSERT_XAL_OK(xal_stream_synchronize(stream0));
  EXPECT_EQ(out, std::vector<uint32_t>(n, 0xfeedu));

  // Bad launches.
  EXPECT_XAL_ERROR(xal_kernel_launch(stream0, k, nullptr, args, 3), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_kernel_launch(stream0, k, &cfg, nullptr, 3), XAL_ERROR_INVALID_ARGUMENT);
  void* null_args[] = {&p, nullptr, &count};
  EXPECT_XAL_ERROR(xal_kernel_launch(stream0, k, &cfg, null_args, 3), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_kernel_launch(stream0, k, &cfg, args, 2), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(last_error().backend, "testdev");
  xal_launch_config_t zero = cfg;
  zero.block[0] = 0;
  EXPECT_XAL_ERROR(xal_kernel_launch(stream0, k, &zero, args, 3), XAL_ERROR_INVALID_ARGUMENT);
  xal_launch_config_t small = cfg;
  small.struct_size = 8;
  EXPECT_XAL_ERROR(xal_kernel_launch(stream0, k, &small, args, 3), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_kernel_launch(nullptr, k, &cfg, args, 3), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_kernel_launch(stream0, nullptr, &cfg, args, 3), XAL_ERROR_INVALID_HANDLE);
  xal_stream_t s1;
  ASSERT_XAL_OK(xal_stream_create(dev1, 0, &s1));
  EXPECT_XAL_ERROR(xal_kernel_launch(s1, k, &cfg, args, 3), XAL_ERROR_INVALID_ARGUMENT);

  ASSERT_XAL_OK(xal_module_unload(m));
  EXPECT_XAL_ERROR(xal_kernel_launch(stream0, k, &cfg, args, 3), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_kernel_get(m, "fill_u32", &k), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_module_unload(m), XAL_ERROR_INVALID_HANDLE);
  ASSERT_XAL_OK(xal_mem_free(dev0, p));
}

TEST_F(Module, BadLoads) {
  xal_module_t m;
  EXPECT_XAL_ERROR(xal_module_load(dev0, XAL_MODULE_FORMAT_NATIVE, nullptr, 4, &m),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_module_load(dev0, XAL_MODULE_FORMAT_NATIVE, kImage, 0, &m),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_module_load(dev0, 99, kImage, 4, &m), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_module_load(dev0, XAL_MODULE_FORMAT_NATIVE, kImage, 4, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_module_load(nullptr, XAL_MODULE_FORMAT_NATIVE, kImage, 4, &m),
                   XAL_ERROR_INVALID_HANDLE);
  // The backend rejects the image, with its own code.
  EXPECT_XAL_ERROR(xal_module_load(dev0, XAL_MODULE_FORMAT_PTX, kImage, sizeof kImage, &m),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, 3);
  EXPECT_STREQ(last_error().vendor_name, "TESTDEV_ERROR_INVALID_IMAGE");
  ASSERT_XAL_OK(xal_module_load(dev0, XAL_MODULE_FORMAT_NATIVE, kImage, sizeof kImage - 1, &m));
  xal_kernel_t k;
  EXPECT_XAL_ERROR(xal_kernel_get(m, "nope", &k), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_kernel_get(m, nullptr, &k), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_kernel_get(m, "fill_u32", nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_kernel_get(nullptr, "fill_u32", &k), XAL_ERROR_INVALID_HANDLE);
  // Left loaded: xal_shutdown releases it.
}
