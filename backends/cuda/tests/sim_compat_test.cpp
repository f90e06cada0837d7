// The rules of the real CUDA driver that the simulated one enforces
// (SIMULATION ONLY): a driver older than the toolkit (function variants,
// PTX ISA), the legacy-stream variants, no driver calls inside a host
// function, and the error that names every embedded kernel image tried.
#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "../src/kernels.h"
#include "plugin_fixture.h"

namespace xal::cuda::test {
namespace {

xal_status_t init(xal_backend_t** out) { return init_instance(plugin_table(), out); }

TEST(CudaSimulationDriverVersions, OlderDriverGetsTheOlderVariant) {
  // CUDA 12.4 has no cuEventElapsedTime_v2 (12.8) and refuses to be asked
  // for a version newer than itself: the plugin asks for the older variant.
  ScopedEnv version("XALSIM_CUDA_VERSION", "12040");
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(init(&backend), XAL_SUCCESS) << last_error().message;
  const xal_backend_table_t* t = plugin_table();
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(t->describe(backend, &d), XAL_SUCCESS);
  EXPECT_STREQ(d.driver_version, "12.4");
  xal_bdevice_t* dev = nullptr;
  ASSERT_EQ(t->device_get(backend, 0, &dev), XAL_SUCCESS);
  xal_bstream_t* stream = nullptr;
  xal_bevent_t* start = nullptr;
  xal_bevent_t* end = nullptr;
  ASSERT_EQ(t->stream_create(dev, 0, &stream), XAL_SUCCESS);
  ASSERT_EQ(t->event_create(dev, 0, &start), XAL_SUCCESS);
  ASSERT_EQ(t->event_create(dev, 0, &end), XAL_SUCCESS);
  ASSERT_EQ(t->event_record(start, stream), XAL_SUCCESS);
  ASSERT_EQ(t->event_record(end, stream), XAL_SUCCESS);
  ASSERT_EQ(t->event_synchronize(end), XAL_SUCCESS);
  float ms = -1.0f;
  EXPECT_EQ(t->event_elapsed_ms(start, end, &ms), XAL_SUCCESS)
      << last_error().message;
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(t->event_destroy(start), XAL_SUCCESS);
  EXPECT_EQ(t->event_destroy(end), XAL_SUCCESS);
  EXPECT_EQ(t->stream_destroy(stream), XAL_SUCCESS);
  EXPECT_EQ(t->shutdown(backend), XAL_SUCCESS);
}

TEST(CudaSimulationDriverVersions, TooOldDriverSaysWhichVersionIsNeeded) {
  ScopedEnv version("XALSIM_CUDA_VERSION", "10020");
  xal_backend_t* backend = nullptr;
  EXPECT_EQ(init(&backend), XAL_ERROR_BACKEND_UNAVAILABLE);
  const std::string& message = last_error().message;
  EXPECT_NE(message.find("libcuda.so.1 is too old: missing "
                         "cuDevicePrimaryCtxRelease"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("the driver is CUDA 10.2; this call needs CUDA 11.0"),
            std::string::npos)
      << message;
}

TEST(CudaSimulationDriverVersions, FunctionsAreTheLegacyStreamVariants) {
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(init(&backend), XAL_SUCCESS) << last_error().message;
  const char* path = std::getenv("XAL_CUDA_DRIVER");
  ASSERT_NE(path, nullptr);
  void* sim = dlopen(path, RTLD_LAZY | RTLD_LOCAL);  // the plugin's mapping
  ASSERT_NE(sim, nullptr);
  using FlagsFn = unsigned long long (*)();
  auto flags = reinterpret_cast<FlagsFn>(dlsym(sim, "xalsim_proc_address_flags"));
  ASSERT_NE(flags, nullptr);
  // Never CU_GET_PROC_ADDRESS_DEFAULT (which follows the caller's build
  // flags) nor the per-thread default stream variants.
  EXPECT_EQ(flags(), static_cast<unsigned long long>(
                         CU_GET_PROC_ADDRESS_LEGACY_STREAM));
  dlclose(sim);
  EXPECT_EQ(plugin_table()->shutdown(backend), XAL_SUCCESS);
}

// NVML numbers cards its own way: each CUDA device is matched by PCI bus id
// (device 1 in the simulated NVML) or else by UUID (device 0); sensors come
// in NVML's units (mW, mJ, MHz) and an unsupported one leaves its bit clear.
TEST(CudaSimulationNvml, SensorsOfTheMatchingCardInXalUnits) {
  ScopedEnv nvml("XAL_CUDA_NVML", XAL_CUDA_SIM_NVML_PATH);
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(init(&backend), XAL_SUCCESS) << last_error().message;
  const xal_backend_table_t* t = plugin_table();
  for (uint32_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("device " + std::to_string(i));
    xal_bdevice_t* dev = nullptr;
    ASSERT_EQ(t->device_get(backend, i, &dev), XAL_SUCCESS);
    xal_device_properties_t p{};
    p.struct_size = sizeof p;
    ASSERT_EQ(t->device_get_properties(dev, &p), XAL_SUCCESS);
    EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_METRICS);
    xal_device_metrics_t m{};
    m.struct_size = sizeof m;
    ASSERT_EQ(t->device_get_metrics(dev, &m), XAL_SUCCESS);
    EXPECT_TRUE(m.valid & XAL_METRIC_UTILIZATION);
    EXPECT_EQ(m.utilization_percent, 37.0);
    EXPECT_TRUE(m.valid & XAL_METRIC_POWER);
    EXPECT_DOUBLE_EQ(m.power_w, 123.456);
    EXPECT_TRUE(m.valid & XAL_METRIC_ENERGY);
    EXPECT_GT(m.energy_j, 0.0);  // joules since init, from millijoules
    EXPECT_LT(m.energy_j, 100.0);
    EXPECT_EQ(m.sm_clock_mhz, 1980u);
    EXPECT_EQ(m.memory_clock_mhz, 2619u);
    EXPECT_TRUE(m.valid & XAL_METRIC_PCIE_REPLAYS);
    // Unsupported there: temperature and ECC are not reported.
    EXPECT_FALSE(m.valid & XAL_METRIC_TEMPERATURE);
    EXPECT_FALSE(m.valid & XAL_METRIC_ECC_CORRECTED);
    EXPECT_FALSE(m.valid & XAL_METRIC_ECC_UNCORRECTED);
    // NVML has no memory figures: the driver's stay.
    EXPECT_TRUE(m.valid & XAL_METRIC_MEMORY_TOTAL);
    EXPECT_EQ(m.memory_total_bytes, p.memory_bytes);
    // Xid events are watched; none came.
    EXPECT_TRUE(m.valid & XAL_METRIC_LAST_XID);
    EXPECT_EQ(m.last_xid, 0u);
  }
  EXPECT_EQ(t->shutdown(backend), XAL_SUCCESS);
}

// The simulated NVML's control: card `index` reports Xid `xid`.
using RaiseXid = int (*)(int index, unsigned long long xid);

xal_device_metrics_t metrics_of(xal_backend_t* backend, uint32_t index) {
  const xal_backend_table_t* t = plugin_table();
  xal_bdevice_t* dev = nullptr;
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  EXPECT_EQ(t->device_get(backend, index, &dev), XAL_SUCCESS);
  if (dev != nullptr) {
    EXPECT_EQ(t->device_get_metrics(dev, &m), XAL_SUCCESS);
  }
  return m;
}

// An Xid NVML reports for a card shows in that device's metrics (and only
// there) as last_xid, the latest one winning, and stays until the next.
TEST(CudaSimulationNvml, XidEventsReachTheDevicesLastXid) {
  ScopedEnv nvml("XAL_CUDA_NVML", XAL_CUDA_SIM_NVML_PATH);
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(init(&backend), XAL_SUCCESS) << last_error().message;
  // The plugin's own mapping of the simulated NVML, its events included.
  void* sim = dlopen(XAL_CUDA_SIM_NVML_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(sim, nullptr);
  auto raise = reinterpret_cast<RaiseXid>(dlsym(sim, "xalsim_nvml_raise_xid"));
  ASSERT_NE(raise, nullptr);

  ASSERT_EQ(raise(1, 79), 1);  // GPU has fallen off the bus
  xal_device_metrics_t m1 = metrics_of(backend, 1);
  xal_device_metrics_t m0 = metrics_of(backend, 0);
  EXPECT_TRUE(m1.valid & XAL_METRIC_LAST_XID);
  EXPECT_EQ(m1.last_xid, 79u);
  EXPECT_TRUE(m0.valid & XAL_METRIC_LAST_XID);
  EXPECT_EQ(m0.last_xid, 0u);

  ASSERT_EQ(raise(0, 48), 1);
  ASSERT_EQ(raise(0, 94), 1);
  EXPECT_EQ(metrics_of(backend, 0).last_xid, 94u);  // the latest
  EXPECT_EQ(metrics_of(backend, 0).last_xid, 94u);  // until the next
  EXPECT_EQ(metrics_of(backend, 1).last_xid, 79u);

  dlclose(sim);
  EXPECT_EQ(plugin_table()->shutdown(backend), XAL_SUCCESS);
}

// Where NVML has no events for a card, last_xid is not reported (its bit
// stays clear) and the other sensors still are.
TEST(CudaSimulationNvml, NoXidEventsLeaveLastXidUnreported) {
  ScopedEnv nvml("XAL_CUDA_NVML", XAL_CUDA_SIM_NVML_PATH);
  ScopedEnv no_events("XALSIM_NVML_NO_EVENTS", "1");
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(init(&backend), XAL_SUCCESS) << last_error().message;
  for (uint32_t i = 0; i < 2; ++i) {
    const xal_device_metrics_t m = metrics_of(backend, i);
    EXPECT_FALSE(m.valid & XAL_METRIC_LAST_XID) << "device " << i;
    EXPECT_TRUE(m.valid & XAL_METRIC_POWER) << "device " << i;
  }
  EXPECT_EQ(plugin_table()->shutdown(backend), XAL_SUCCESS);
}

TEST_F(CudaSim, PtxOfANewerIsaThanTheDriverIsRefusedWithTheLog) {
  ScopedEnv version("XALSIM_CUDA_VERSION", "12040");
  const std::string ptx =
      ".version 9.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry xalsim_fill_u32()\n{ ret; }\n";
  xal_bmodule_t* module = nullptr;
  EXPECT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_PTX, ptx.data(),
                                ptx.size(), &module),
            XAL_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(last_error().vendor_code, 222);
  EXPECT_EQ(last_error().vendor_name, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
  EXPECT_NE(last_error().message.find(
                "Unsupported .version 9.0; current version is '8.4'"),
            std::string::npos)
      << last_error().message;
}

// A host function the driver runs may not call the driver; xal runs them on
// a thread of its own (host_funcs.h), where they may.
struct DriverCall {
  const xal_backend_table_t* table;
  xal_bdevice_t* device;
  xal_status_t status = XAL_ERROR_INTERNAL;
  xal_devptr_t ptr = 0;
};

void alloc_in_host_function(void* user) {
  auto* c = static_cast<DriverCall*>(user);
  c->status = c->table->mem_alloc(c->device, 256, &c->ptr);
}

TEST_F(CudaSim, HostFunctionsOnXalsThreadMayCallTheDriver) {
  DriverCall call{table_, dev0_};
  ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, alloc_in_host_function, &call),
            XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  ASSERT_EQ(call.status, XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(table_->mem_free(dev0_, call.ptr), XAL_SUCCESS);
}

TEST(CudaSimDriverHostFuncs, HostFunctionsMayNotCallTheDriver) {
  const xal_backend_table_t* table = plugin_table();
  xal_backend_t* backend = nullptr;
  {
    ScopedEnv mode("XAL_CUDA_HOST_FUNCS", "driver");
    ASSERT_EQ(init(&backend), XAL_SUCCESS) << last_error().message;
  }
  xal_bdevice_t* dev = nullptr;
  xal_bstream_t* stream = nullptr;
  ASSERT_EQ(table->device_get(backend, 0, &dev), XAL_SUCCESS);
  ASSERT_EQ(table->stream_create(dev, 0, &stream), XAL_SUCCESS);
  DriverCall call{table, dev};
  ASSERT_EQ(table->stream_enqueue_host_func(stream, alloc_in_host_function, &call),
            XAL_SUCCESS);
  ASSERT_EQ(table->stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(call.status, XAL_ERROR_NOT_SUPPORTED);
  // The device is still healthy: the refusal is not sticky.
  xal_devptr_t p = 0;
  EXPECT_EQ(table->mem_alloc(dev, 256, &p), XAL_SUCCESS);
  EXPECT_EQ(table->mem_free(dev, p), XAL_SUCCESS);
  EXPECT_EQ(table->shutdown(backend), XAL_SUCCESS);
}

// After a reset the driver hands out the old addresses again (the
// simulation as the real driver): freeing an allocation made before the
// reset must not free the new one at the same address.
TEST_F(CudaSim, FreeOfMemoryFromBeforeAResetKeepsTheNewAllocation) {
  const xal_devptr_t old = alloc(dev0_, 4096);
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  xal_bstream_t* stream = nullptr;
  ASSERT_EQ(table_->stream_create(dev0_, 0, &stream), XAL_SUCCESS);
  const xal_devptr_t fresh = alloc(dev0_, 4096);
  ASSERT_EQ(fresh, old) << "the simulated driver reuses freed addresses";
  EXPECT_EQ(table_->mem_free(dev0_, old), XAL_SUCCESS);
  std::vector<uint32_t> in(1024, 0xABCD1234u), out(1024, 0);
  EXPECT_EQ(table_->memcpy_htod(stream, fresh, in.data(), 4096), XAL_SUCCESS)
      << last_error().message;
  EXPECT_EQ(table_->memcpy_dtoh(stream, out.data(), fresh, 4096), XAL_SUCCESS)
      << last_error().message;
  EXPECT_EQ(table_->stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(out, in);
  EXPECT_EQ(table_->mem_free(dev0_, fresh), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, fresh), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->stream_destroy(stream), XAL_SUCCESS);
}

// Dynamic shared memory past 48 KiB needs the kernel's opt-in, which the
// plugin gives (cuFuncSetAttribute) up to what the device allows.
TEST_F(CudaSim, LargeSharedMemoryLaunchesAfterTheOptIn) {
  const char ptx[] =
      ".version 8.0\n.target sm_80\n.address_size 64\n"
      ".visible .entry xalsim_fill_u32(.param .u64 a, .param .u32 b, "
      ".param .u64 c)\n{ ret; }\n";
  xal_bmodule_t* module = nullptr;
  ASSERT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_PTX, ptx,
                                sizeof ptx - 1, &module),
            XAL_SUCCESS);
  xal_bkernel_t* kernel = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "xalsim_fill_u32", &kernel), XAL_SUCCESS);
  xal_devptr_t buf = alloc(dev0_, 1024);
  uint32_t value = 7;
  unsigned long long n = 256;
  void* args[] = {&buf, &value, &n};
  xal_launch_config_t config{sizeof config, {1, 1, 1}, {256, 1, 1},
                             96 * 1024, nullptr};
  EXPECT_EQ(table_->kernel_launch(stream0_, kernel, &config, args, 3),
            XAL_SUCCESS)
      << last_error().message;
  config.shared_memory_bytes = 300 * 1024;  // more than an H200 block has
  EXPECT_EQ(table_->kernel_launch(stream0_, kernel, &config, args, 3),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, 1);
  EXPECT_NE(last_error().message.find("cuFuncSetAttribute"), std::string::npos);
  config.shared_memory_bytes = 0;
  config.grid[1] = 70000;  // grid y is at most 65535
  EXPECT_EQ(table_->kernel_launch(stream0_, kernel, &config, args, 3),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, buf), XAL_SUCCESS);
  EXPECT_EQ(table_->module_unload(module), XAL_SUCCESS);
}

#if XAL_CUDA_TEST_HAVE_KERNELS
const xal_cuda_reduce_v1_t* reduce_extension(const xal_backend_table_t* t,
                                             xal_backend_t* backend) {
  return static_cast<const xal_cuda_reduce_v1_t*>(
      t->get_extension(backend, XAL_CUDA_REDUCE_EXTENSION));
}

// The fatbin's PTX is of the toolkit's ISA; the fallback PTX is ISA 7.0,
// which a CUDA 12.4 driver JITs.
TEST_F(CudaSim, EmbeddedKernelsLoadOnADriverOlderThanTheToolkit) {
  ScopedEnv version("XALSIM_CUDA_VERSION", "12040");
  const auto* ext = reduce_extension(table_, backend_);
  ASSERT_NE(ext, nullptr);
  std::vector<float> a = {1.0f, 2.0f, 3.0f}, b = {10.0f, 20.0f, 30.0f};
  xal_devptr_t da = alloc(dev0_, 12), db = alloc(dev0_, 12);
  ASSERT_EQ(table_->memcpy_htod(stream0_, da, a.data(), 12), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_htod(stream0_, db, b.data(), 12), XAL_SUCCESS);
  ASSERT_EQ(ext->reduce(stream0_, da, db, 3, XAL_DTYPE_F32, XAL_OP_SUM),
            XAL_SUCCESS)
      << last_error().message;
  ASSERT_EQ(table_->memcpy_dtoh(stream0_, a.data(), da, 12), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(a, (std::vector<float>{11.0f, 22.0f, 33.0f}));
  EXPECT_EQ(table_->mem_free(dev0_, da), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, db), XAL_SUCCESS);
}

TEST_F(CudaSim, EmbeddedKernelsThatDoNotLoadNameEveryImage) {
  const auto* ext = reduce_extension(table_, backend_);
  ASSERT_NE(ext, nullptr);
  xal_devptr_t d = alloc(dev1_, 16);
  setenv("XALSIM_CUDA_FAIL", "cuModuleLoadDataEx=222", 1);
  EXPECT_EQ(ext->reduce(stream1_, d, d, 4, XAL_DTYPE_F32, XAL_OP_SUM),
            XAL_ERROR_NOT_SUPPORTED);
  unsetenv("XALSIM_CUDA_FAIL");
  const std::string message = last_error().message;
  RecordProperty("message", message);
  EXPECT_EQ(last_error().vendor_code, 222);
  EXPECT_NE(message.find("xal's embedded kernels do not load on device 1 "
                         "(driver CUDA 13.0)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("fatbin (SASS sm_80 sm_90"), std::string::npos)
      << message;
  EXPECT_NE(message.find("PTX (compute_80, ISA 7.0)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("CUDA_ERROR_UNSUPPORTED_PTX_VERSION"),
            std::string::npos)
      << message;
  // Nothing is cached: once the driver takes them, the kernels run.
  EXPECT_EQ(ext->reduce(stream1_, d, d, 4, XAL_DTYPE_F32, XAL_OP_SUM),
            XAL_SUCCESS)
      << last_error().message;
  EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev1_, d), XAL_SUCCESS);
}
#endif

}  // namespace
}  // namespace xal::cuda::test
