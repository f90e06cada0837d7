// The OpenCL backend through libxal's public ABI (XAL_BACKENDS=opencl).
#include "xal/xal.h"

#include <CL/cl.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

xal_error_info_t last_error() {
  xal_error_info_t e{};
  e.struct_size = sizeof(e);
  xal_last_error(&e);
  return e;
}

xal_status_t init_with(const char* backends) {
  xal_init_options_t o{};
  o.struct_size = sizeof(o);
  o.backends = backends;
  o.validation = -1;
  return xal_init(&o);
}

// Index of the backend named `name`, or -1.
int find_backend(const char* name, xal_backend_info_t* out) {
  uint32_t n = 0;
  if (xal_backend_count(&n) != XAL_SUCCESS) return -1;
  for (uint32_t i = 0; i < n; ++i) {
    out->struct_size = sizeof(*out);
    if (xal_backend_get_info(i, out) == XAL_SUCCESS && std::strcmp(out->name, name) == 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

class OpenclAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(init_with(XAL_OPENCL_PLUGIN), XAL_SUCCESS) << last_error().message;
    xal_backend_info_t info{};
    ASSERT_GE(find_backend("opencl", &info), 0);
    if (info.state != XAL_BACKEND_STATE_LOADED) {
      GTEST_SKIP() << "OpenCL backend not loaded here: " << info.reason;
      return;
    }
    EXPECT_GE(info.device_count, 1u);
    ASSERT_EQ(xal_device_get(0, &dev), XAL_SUCCESS);
    ASSERT_EQ(xal_stream_create(dev, 0, &stream), XAL_SUCCESS) << last_error().message;
  }
  void TearDown() override {
    if (stream != nullptr) {
      EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS);
    }
    EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
  }
  xal_device_t dev = nullptr;
  xal_stream_t stream = nullptr;
};

TEST(OpenclAbiLoad, BadLibraryPathIsUnavailableWhileOthersLoad) {
  setenv("XAL_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", 1);
  std::string backends = XAL_OPENCL_PLUGIN;
#ifdef XAL_TEST_MOCK_PLUGIN
  backends += std::string(",") + XAL_TEST_MOCK_PLUGIN;
#endif
  const xal_status_t st = init_with(backends.c_str());
  unsetenv("XAL_OPENCL_LIBRARY");
  ASSERT_EQ(st, XAL_SUCCESS) << last_error().message;
  xal_backend_info_t info{};
  ASSERT_GE(find_backend("opencl", &info), 0);
  EXPECT_EQ(info.state, static_cast<uint32_t>(XAL_BACKEND_STATE_UNAVAILABLE));
  EXPECT_EQ(info.status, XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(std::string(info.reason).find("No such file or directory"), std::string::npos)
      << info.reason;
#ifdef XAL_TEST_MOCK_PLUGIN
  xal_backend_info_t mock{};
  ASSERT_GE(find_backend("mock", &mock), 0);
  EXPECT_EQ(mock.state, static_cast<uint32_t>(XAL_BACKEND_STATE_LOADED)) << mock.reason;
  uint32_t devices = 0;
  EXPECT_EQ(xal_device_count(&devices), XAL_SUCCESS);
  EXPECT_GE(devices, 1u);
#endif
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}

TEST_F(OpenclAbi, Properties) {
  xal_device_properties_t p{};
  p.struct_size = sizeof(p);
  ASSERT_EQ(xal_device_get_properties(dev, &p), XAL_SUCCESS);
  EXPECT_STREQ(p.backend, "opencl");
  EXPECT_GT(std::strlen(p.name), 0u);
  EXPECT_GT(p.memory_bytes, 0u);
  EXPECT_NE(p.capabilities & XAL_DEVICE_CAP_KERNELS, 0u);
  uint64_t free_bytes = 0, total = 0;
  ASSERT_EQ(xal_mem_get_info(dev, &free_bytes, &total), XAL_SUCCESS);
  EXPECT_EQ(total, p.memory_bytes);
}

TEST_F(OpenclAbi, CopiesAndMemsetAtOddOffsets) {
  constexpr size_t kSize = 3001;
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(xal_mem_alloc(dev, kSize, &a), XAL_SUCCESS) << last_error().message;
  ASSERT_EQ(xal_mem_alloc(dev, kSize, &b), XAL_SUCCESS);
  std::vector<uint8_t> src(kSize), back(kSize);
  for (size_t i = 0; i < kSize; ++i) src[i] = static_cast<uint8_t>(i * 31 + 5);
  ASSERT_EQ(xal_memset(stream, b, 0x5A, kSize), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_htod(stream, a + 3, src.data(), kSize - 3), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_dtod(stream, b + 1, a + 3, 1000), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_dtoh(stream, back.data(), b, kSize), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(back[0], 0x5A);
  EXPECT_EQ(std::memcmp(back.data() + 1, src.data(), 1000), 0);
  EXPECT_EQ(back[1001], 0x5A);
  // The core's registry or the backend refuses a copy past the end.
  EXPECT_NE(xal_memcpy_htod(stream, a + 10, src.data(), kSize), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev, a), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev, b), XAL_SUCCESS);
}

TEST_F(OpenclAbi, EventsTimeWork) {
  xal_event_t e0 = nullptr, e1 = nullptr;
  ASSERT_EQ(xal_event_create(dev, 0, &e0), XAL_SUCCESS);
  ASSERT_EQ(xal_event_create(dev, 0, &e1), XAL_SUCCESS);
  xal_devptr_t d = 0;
  ASSERT_EQ(xal_mem_alloc(dev, 1 << 20, &d), XAL_SUCCESS);
  ASSERT_EQ(xal_event_record(e0, stream), XAL_SUCCESS);
  ASSERT_EQ(xal_memset(stream, d, 1, 1 << 20), XAL_SUCCESS);
  ASSERT_EQ(xal_event_record(e1, stream), XAL_SUCCESS);
  ASSERT_EQ(xal_event_synchronize(e1), XAL_SUCCESS);
  float ms = -1;
  ASSERT_EQ(xal_event_elapsed_ms(e0, e1, &ms), XAL_SUCCESS) << last_error().message;
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(xal_stream_query(stream), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev, d), XAL_SUCCESS);
  EXPECT_EQ(xal_event_destroy(e0), XAL_SUCCESS);
  EXPECT_EQ(xal_event_destroy(e1), XAL_SUCCESS);
}

TEST_F(OpenclAbi, SaxpyKernel) {
  const char src[] =
      "__kernel void saxpy(__global float* y, __global const float* x, float a, uint n) {"
      "  size_t i = get_global_id(0); if (i < n) y[i] = a * x[i] + y[i]; }";
  xal_module_t m = nullptr;
  ASSERT_EQ(xal_module_load(dev, XAL_MODULE_FORMAT_OPENCL_C, src, sizeof(src), &m), XAL_SUCCESS)
      << last_error().message;
  xal_kernel_t k = nullptr;
  ASSERT_EQ(xal_kernel_get(m, "saxpy", &k), XAL_SUCCESS);
  constexpr uint32_t kN = 777;
  std::vector<float> x(kN), y(kN, 3.0f), out(kN);
  for (uint32_t i = 0; i < kN; ++i) x[i] = static_cast<float>(i) * 0.25f;
  xal_devptr_t dx = 0, dy = 0;
  ASSERT_EQ(xal_mem_alloc(dev, kN * 4, &dx), XAL_SUCCESS);
  ASSERT_EQ(xal_mem_alloc(dev, kN * 4, &dy), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_htod(stream, dx, x.data(), kN * 4), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_htod(stream, dy, y.data(), kN * 4), XAL_SUCCESS);
  float a = -2.0f;
  uint32_t n = kN;
  void* args[] = {&dy, &dx, &a, &n};
  const size_t sizes[] = {8, 8, 4, 4};
  xal_launch_config_t cfg{sizeof(cfg), {(kN + 31) / 32, 1, 1}, {32, 1, 1}, 0, sizes};
  ASSERT_EQ(xal_kernel_launch(stream, k, &cfg, args, 4), XAL_SUCCESS) << last_error().message;
  ASSERT_EQ(xal_memcpy_dtoh(stream, out.data(), dy, kN * 4), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(stream), XAL_SUCCESS);
  for (uint32_t i = 0; i < kN; ++i) ASSERT_FLOAT_EQ(out[i], -2.0f * x[i] + 3.0f) << i;
  EXPECT_EQ(xal_mem_free(dev, dx), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev, dy), XAL_SUCCESS);
  EXPECT_EQ(xal_module_unload(m), XAL_SUCCESS);
}

TEST_F(OpenclAbi, ErrorsCarryTheClCode) {
  const char bad[] = "__kernel void k(__global int* p) { p[0] = nothing_here; }";
  xal_module_t m = nullptr;
  EXPECT_EQ(xal_module_load(dev, XAL_MODULE_FORMAT_OPENCL_C, bad, sizeof(bad), &m),
            XAL_ERROR_INVALID_ARGUMENT);
  xal_error_info_t e = last_error();
  EXPECT_EQ(e.vendor_code, CL_BUILD_PROGRAM_FAILURE);
  EXPECT_STREQ(e.vendor_name, "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_NE(std::string(e.message).find("nothing_here"), std::string::npos) << e.message;

  xal_devptr_t p = 0;
  EXPECT_EQ(xal_mem_alloc(dev, size_t{1} << 50, &p), XAL_ERROR_OUT_OF_MEMORY);
  e = last_error();
  EXPECT_STREQ(e.backend, "opencl");
  EXPECT_NE(e.vendor_code, 0);
}

}  // namespace
