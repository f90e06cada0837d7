// Error mapping, sticky errors and reset, modules and kernels of the CUDA
// backend on the simulated driver (SIMULATION ONLY).
#include <cstring>
#include <string>
#include <vector>

#include "../src/kernels.h"
#include "plugin_fixture.h"

namespace xal::cuda::test {
namespace {

const char kPtx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry xalsim_fill_u32(.param .u64 a, .param .u32 b, .param .u64 c)\n"
    "{ ret; }\n"
    ".visible .entry xalsim_illegal_address()\n{ ret; }\n";

struct Mapping {
  int code;
  xal_status_t status;
  const char* name;
  bool sticky;
};

const Mapping kMappings[] = {
    {1, XAL_ERROR_INVALID_ARGUMENT, "CUDA_ERROR_INVALID_VALUE", false},
    {2, XAL_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", false},
    {3, XAL_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", false},
    {46, XAL_ERROR_BACKEND_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE", false},
    {101, XAL_ERROR_INVALID_ARGUMENT, "CUDA_ERROR_INVALID_DEVICE", false},
    {201, XAL_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_CONTEXT", false},
    {214, XAL_ERROR_HARDWARE, "CUDA_ERROR_ECC_UNCORRECTABLE", true},
    {218, XAL_ERROR_INVALID_ARGUMENT, "CUDA_ERROR_INVALID_PTX", false},
    {400, XAL_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", false},
    {700, XAL_ERROR_DEVICE_LOST, "CUDA_ERROR_ILLEGAL_ADDRESS", true},
    {702, XAL_ERROR_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", true},
    {710, XAL_ERROR_DEVICE_LOST, "CUDA_ERROR_ASSERT", true},
    {716, XAL_ERROR_DEVICE_LOST, "CUDA_ERROR_MISALIGNED_ADDRESS", true},
    {719, XAL_ERROR_DEVICE_LOST, "CUDA_ERROR_LAUNCH_FAILED", true},
    {801, XAL_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", false},
    {909, XAL_ERROR_TIMEOUT, "CUDA_ERROR_TIMEOUT", false},
    {999, XAL_ERROR_BACKEND, "CUDA_ERROR_UNKNOWN", false},
    {1001, XAL_ERROR_BACKEND, "CUDA_ERROR_UNKNOWN_CODE", false},
};

xal_device_health_t health(const xal_backend_table_t* t, xal_bdevice_t* d) {
  xal_device_health_t h{};
  h.struct_size = sizeof h;
  EXPECT_EQ(t->device_get_health(d, &h), XAL_SUCCESS);
  return h;
}

TEST_F(CudaSim, EveryInjectedResultMapsWithItsVendorCode) {
  for (const Mapping& m : kMappings) {
    SCOPED_TRACE(m.name);
    setenv("XALSIM_CUDA_FAIL", ("cuMemAlloc=" + std::to_string(m.code)).c_str(), 1);
    xal_devptr_t p = 0;
    EXPECT_EQ(table_->mem_alloc(dev0_, 256, &p), m.status);
    EXPECT_EQ(last_error().status, m.status);
    EXPECT_EQ(last_error().vendor_code, m.code);
    EXPECT_EQ(last_error().vendor_name, m.name);
    EXPECT_NE(last_error().message.find("cuMemAlloc"), std::string::npos);
    unsetenv("XALSIM_CUDA_FAIL");
    const xal_device_health_t h = health(table_, dev0_);
    if (m.sticky) {
      EXPECT_NE(h.state, XAL_HEALTH_OK);
      EXPECT_EQ(h.vendor_code, m.code);
      EXPECT_EQ(h.sticky_status, m.status);
      EXPECT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
      ASSERT_EQ(table_->stream_create(dev0_, 0, &stream0_), XAL_SUCCESS);
    } else {
      EXPECT_EQ(h.state, XAL_HEALTH_OK);
    }
    ASSERT_EQ(table_->mem_alloc(dev0_, 256, &p), XAL_SUCCESS);
    EXPECT_EQ(table_->mem_free(dev0_, p), XAL_SUCCESS);
  }
}

TEST_F(CudaSim, StickyErrorHoldsUntilReset) {
  const xal_devptr_t kept = alloc(dev0_, 4096);
  setenv("XALSIM_CUDA_FAIL", "cuStreamSynchronize=700@1", 1);
  EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_ERROR_DEVICE_LOST);
  unsetenv("XALSIM_CUDA_FAIL");
  xal_device_health_t h = health(table_, dev0_);
  EXPECT_EQ(h.state, XAL_HEALTH_LOST);
  EXPECT_EQ(h.vendor_code, 700);
  EXPECT_NE(std::string(h.message).find("xal_device_reset"), std::string::npos);
  // Everything on the device now fails with the sticky error...
  xal_devptr_t p = 0;
  EXPECT_EQ(table_->mem_alloc(dev0_, 256, &p), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last_error().vendor_code, 700);
  EXPECT_NE(last_error().message.find("sticky"), std::string::npos);
  EXPECT_EQ(table_->stream_query(stream0_), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(table_->device_synchronize(dev0_), XAL_ERROR_DEVICE_LOST);
  // ...while the other device works.
  EXPECT_EQ(health(table_, dev1_).state, XAL_HEALTH_OK);
  const xal_devptr_t other = alloc(dev1_, 256);
  EXPECT_EQ(table_->mem_free(dev1_, other), XAL_SUCCESS);
  // Reset clears it; old objects are invalidated, new ones work.
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  EXPECT_EQ(health(table_, dev0_).state, XAL_HEALTH_OK);
  EXPECT_EQ(table_->stream_query(stream0_), XAL_ERROR_INVALID_HANDLE);
  EXPECT_NE(last_error().message.find("xal_device_reset"), std::string::npos);
  EXPECT_EQ(table_->mem_free(dev0_, kept), XAL_SUCCESS);  // went with the reset
  EXPECT_EQ(table_->stream_destroy(stream0_), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_create(dev0_, 0, &stream0_), XAL_SUCCESS);
  const xal_devptr_t fresh = alloc(dev0_, 1024);
  std::vector<uint8_t> in(1024, 5), out(1024, 0);
  ASSERT_EQ(table_->memcpy_htod(stream0_, fresh, in.data(), 1024), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_dtoh(stream0_, out.data(), fresh, 1024), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(in, out);
  EXPECT_EQ(table_->mem_free(dev0_, fresh), XAL_SUCCESS);
}

// The driver keeps some sticky errors past cuDevicePrimaryCtxReset (after
// 700 "the process must be terminated and relaunched"): the reset then
// fails, the device stays lost, and the message says to restart the process
// (XALSIM_CUDA_STICKY_SURVIVES_RESET makes the simulation keep it).
TEST_F(CudaSim, StickyErrorTheResetDoesNotClearKeepsTheDeviceLost) {
  setenv("XALSIM_CUDA_FAIL", "cuStreamSynchronize=700@1", 1);
  EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_ERROR_DEVICE_LOST);
  unsetenv("XALSIM_CUDA_FAIL");
  ScopedEnv survives("XALSIM_CUDA_STICKY_SURVIVES_RESET", "1");
  EXPECT_EQ(table_->device_reset(dev0_), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last_error().vendor_code, 700);
  // As an H200's driver (580) after 700: the primary context cannot be
  // retained again.
  EXPECT_NE(last_error().message.find("cuda: device 0 still fails after cuDevicePrimaryCtxReset: "
                                      "cuDevicePrimaryCtxRetain failed"),
            std::string::npos)
      << last_error().message;
  xal_device_health_t h = health(table_, dev0_);
  EXPECT_EQ(h.state, XAL_HEALTH_LOST);
  EXPECT_EQ(h.vendor_code, 700);
  EXPECT_NE(std::string(h.message).find("until the process ends"), std::string::npos) << h.message;
  xal_devptr_t p = 0;
  EXPECT_EQ(table_->mem_alloc(dev0_, 256, &p), XAL_ERROR_DEVICE_LOST);
  EXPECT_NE(last_error().message.find("that xal_device_reset did not clear: restart the process"),
            std::string::npos)
      << last_error().message;
  EXPECT_EQ(health(table_, dev1_).state, XAL_HEALTH_OK);
  // Where the driver clears it after all, a later reset brings the device back.
  unsetenv("XALSIM_CUDA_STICKY_SURVIVES_RESET");
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(health(table_, dev0_).state, XAL_HEALTH_OK);
  const xal_devptr_t fresh = alloc(dev0_, 256);
  EXPECT_EQ(table_->mem_free(dev0_, fresh), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(stream0_), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_create(dev0_, 0, &stream0_), XAL_SUCCESS);
}

TEST_F(CudaSim, KernelFaultMakesTheDeviceLost) {
  xal_bmodule_t* module = nullptr;
  ASSERT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_PTX, kPtx,
                                sizeof kPtx - 1, &module),
            XAL_SUCCESS)
      << last_error().message;
  xal_bkernel_t* kernel = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "xalsim_illegal_address", &kernel),
            XAL_SUCCESS);
  xal_launch_config_t config{sizeof config, {1, 1, 1}, {32, 1, 1}, 0, nullptr};
  ASSERT_EQ(table_->kernel_launch(stream0_, kernel, &config, nullptr, 0),
            XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last_error().vendor_name, "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(health(table_, dev0_).state, XAL_HEALTH_LOST);
  EXPECT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  EXPECT_EQ(table_->module_unload(module), XAL_SUCCESS);
}

TEST_F(CudaSim, KernelLaunchRunsWithItsArguments) {
  xal_bmodule_t* module = nullptr;
  ASSERT_EQ(table_->module_load(dev1_, XAL_MODULE_FORMAT_PTX, kPtx,
                                sizeof kPtx - 1, &module),
            XAL_SUCCESS);
  xal_bkernel_t* kernel = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "xalsim_fill_u32", &kernel), XAL_SUCCESS);
  xal_bkernel_t* again = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "xalsim_fill_u32", &again), XAL_SUCCESS);
  EXPECT_EQ(kernel, again);
  const size_t count = 1000;
  xal_devptr_t buf = alloc(dev1_, count * 4);
  uint32_t value = 0xC0FFEE;
  unsigned long long n = count;
  void* args[] = {&buf, &value, &n};
  xal_launch_config_t config{sizeof config, {4, 1, 1}, {256, 1, 1}, 0, nullptr};
  ASSERT_EQ(table_->kernel_launch(stream1_, kernel, &config, args, 3), XAL_SUCCESS);
  std::vector<uint32_t> out(count, 0);
  ASSERT_EQ(table_->memcpy_dtoh(stream1_, out.data(), buf, count * 4), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  for (uint32_t v : out) ASSERT_EQ(v, 0xC0FFEEu);
  // A kernel of a module of another device is refused.
  EXPECT_EQ(table_->kernel_launch(stream0_, kernel, &config, args, 3),
            XAL_ERROR_INVALID_ARGUMENT);
  // Bad launch geometry is the driver's INVALID_VALUE.
  xal_launch_config_t bad{sizeof bad, {1, 1, 1}, {2048, 1, 1}, 0, nullptr};
  EXPECT_EQ(table_->kernel_launch(stream1_, kernel, &bad, args, 3),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, 1);
  EXPECT_EQ(table_->mem_free(dev1_, buf), XAL_SUCCESS);
  EXPECT_EQ(table_->module_unload(module), XAL_SUCCESS);
}

TEST_F(CudaSim, PtxThatFailsToCompileGivesTheJitLog) {
  const std::string bad = std::string(".version 8.0\n.target sm_80\n") +
                          "XALSIM_JIT_ERROR here\n";
  xal_bmodule_t* module = nullptr;
  EXPECT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_PTX, bad.data(),
                                bad.size(), &module),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, 218);
  EXPECT_EQ(last_error().vendor_name, "CUDA_ERROR_INVALID_PTX");
  EXPECT_NE(last_error().message.find("JIT log"), std::string::npos);
  EXPECT_NE(last_error().message.find("line 3"), std::string::npos)
      << last_error().message;
  EXPECT_NE(last_error().message.find("XALSIM_JIT_ERROR"), std::string::npos);
}

TEST_F(CudaSim, ModuleBadInput) {
  xal_bmodule_t* module = nullptr;
  EXPECT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_SPIRV, kPtx,
                                sizeof kPtx, &module),
            XAL_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_PTX, kPtx, 0, &module),
            XAL_ERROR_INVALID_ARGUMENT);
  const char garbage[] = "not a module";
  EXPECT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_PTX, garbage,
                                sizeof garbage, &module),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_name, "CUDA_ERROR_INVALID_IMAGE");
  ASSERT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_PTX, kPtx,
                                sizeof kPtx - 1, &module),
            XAL_SUCCESS);
  xal_bkernel_t* kernel = nullptr;
  EXPECT_EQ(table_->kernel_get(module, "nope", &kernel),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("no kernel 'nope'"), std::string::npos);
  EXPECT_EQ(table_->kernel_get(module, "", &kernel), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->module_unload(module), XAL_SUCCESS);
}

#if XAL_CUDA_TEST_HAVE_KERNELS
template <typename T>
std::vector<T> roundtrip(CudaSim* t, const xal_backend_table_t* table,
                         xal_bstream_t* s, xal_bdevice_t* dev,
                         const std::vector<T>& a, const std::vector<T>& b,
                         xal_dtype_t dtype, xal_op_t op) {
  (void)t;
  auto* ext = static_cast<const xal_cuda_reduce_v1_t*>(
      table->get_extension(nullptr, XAL_CUDA_REDUCE_EXTENSION));
  const size_t bytes = a.size() * sizeof(T);
  xal_devptr_t da = 0, db = 0;
  EXPECT_EQ(table->mem_alloc(dev, bytes, &da), XAL_SUCCESS);
  EXPECT_EQ(table->mem_alloc(dev, bytes, &db), XAL_SUCCESS);
  EXPECT_EQ(table->memcpy_htod(s, da, a.data(), bytes), XAL_SUCCESS);
  EXPECT_EQ(table->memcpy_htod(s, db, b.data(), bytes), XAL_SUCCESS);
  EXPECT_EQ(ext->reduce(s, da, db, a.size(), dtype, op), XAL_SUCCESS)
      << last_error().message;
  std::vector<T> out(a.size());
  EXPECT_EQ(table->memcpy_dtoh(s, out.data(), da, bytes), XAL_SUCCESS);
  EXPECT_EQ(table->stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(table->mem_free(dev, da), XAL_SUCCESS);
  EXPECT_EQ(table->mem_free(dev, db), XAL_SUCCESS);
  return out;
}

TEST_F(CudaSim, EmbeddedReductionKernels) {
  ASSERT_NE(table_->get_extension, nullptr);
  ASSERT_NE(table_->get_extension(backend_, XAL_CUDA_REDUCE_EXTENSION), nullptr);
  EXPECT_EQ(table_->get_extension(backend_, "nope"), nullptr);
  std::vector<float> a(3000), b(3000);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = 0.5f * i;
    b[i] = 2.0f;
  }
  auto sum = roundtrip(this, table_, stream0_, dev0_, a, b, XAL_DTYPE_F32, XAL_OP_SUM);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_FLOAT_EQ(sum[i], a[i] + 2.0f);
  std::vector<int32_t> x = {-5, 7, 3, 100}, y = {4, -1, 3, 101};
  EXPECT_EQ(roundtrip(this, table_, stream1_, dev1_, x, y, XAL_DTYPE_I32, XAL_OP_MAX),
            (std::vector<int32_t>{4, 7, 3, 101}));
  std::vector<uint8_t> u = {2, 3, 200}, v = {3, 4, 2};
  EXPECT_EQ(roundtrip(this, table_, stream0_, dev0_, u, v, XAL_DTYPE_U8, XAL_OP_PROD),
            (std::vector<uint8_t>{6, 12, 144}));  // 400 wraps to 144
  // Half types: f16 {1.5, 2.25} + {0.5, 0.25} = {2.0, 2.5}; bf16 min.
  std::vector<uint16_t> h1 = {0x3E00, 0x4080}, h2 = {0x3800, 0x3400};
  EXPECT_EQ(roundtrip(this, table_, stream0_, dev0_, h1, h2, XAL_DTYPE_F16, XAL_OP_SUM),
            (std::vector<uint16_t>{0x4000, 0x4100}));
  std::vector<uint16_t> b1 = {0x3FC0, 0x4000}, b2 = {0x3F00, 0x4040};
  EXPECT_EQ(roundtrip(this, table_, stream0_, dev0_, b1, b2, XAL_DTYPE_BF16, XAL_OP_MIN),
            (std::vector<uint16_t>{0x3F00, 0x4000}));
  // Average = sum, then scale by the rank count.
  auto* ext = static_cast<const xal_cuda_reduce_v1_t*>(
      table_->get_extension(backend_, XAL_CUDA_REDUCE_EXTENSION));
  std::vector<double> d = {2.0, 4.0, 9.0};
  xal_devptr_t dd = alloc(dev0_, 24);
  ASSERT_EQ(table_->memcpy_htod(stream0_, dd, d.data(), 24), XAL_SUCCESS);
  ASSERT_EQ(ext->scale(stream0_, dd, 3, XAL_DTYPE_F64, 2.0), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_dtoh(stream0_, d.data(), dd, 24), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(d, (std::vector<double>{1.0, 2.0, 4.5}));
  EXPECT_EQ(ext->reduce(stream0_, dd, dd, 3, XAL_DTYPE_F64, XAL_OP_AVG),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ext->scale(stream0_, dd, 3, XAL_DTYPE_F64, 0.0),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->mem_free(dev0_, dd), XAL_SUCCESS);
}
#endif

}  // namespace
}  // namespace xal::cuda::test
