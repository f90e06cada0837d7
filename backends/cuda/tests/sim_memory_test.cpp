// Devices, properties, memory and copies of the CUDA backend on the
// simulated driver (SIMULATION ONLY).
#include <cuda.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "plugin_fixture.h"

namespace xal::cuda::test {
namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

TEST_F(CudaSim, DescribeSaysSimulated) {
  ASSERT_NE(table_->describe, nullptr);
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(table_->describe(backend_, &d), XAL_SUCCESS);
  EXPECT_STREQ(d.name, "cuda");
  EXPECT_STREQ(d.driver_version, "13.0");
  EXPECT_TRUE(d.flags & XAL_BACKEND_FLAG_SIMULATED);
  EXPECT_NE(std::string(d.note).find("; simulated driver ("), std::string::npos)
      << d.note;
  EXPECT_EQ(std::string(d.note).rfind(
                "verified on an H200; multi-GPU paths on a simulated driver only", 0),
            0u)
      << d.note;
  // The same words in the table, for xal-info when init fails.
  EXPECT_STREQ(table_->support_note,
               "verified on an H200; multi-GPU paths on a simulated driver only");
}

TEST_F(CudaSim, PropertiesComeFromTheDriver) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(table_->device_get_properties(dev1_, &p), XAL_SUCCESS);
  EXPECT_NE(std::string(p.name).find("simulated"), std::string::npos);
  EXPECT_STREQ(p.vendor, "NVIDIA");
  EXPECT_EQ(p.kind, XAL_DEVICE_KIND_GPU);
  EXPECT_EQ(std::memcmp(p.uuid, "XALSIM-CUDA", 11), 0);
  EXPECT_EQ(p.uuid[15], 1);
  EXPECT_STREQ(p.pci_bus_id, "0000:11:00.0");
  EXPECT_EQ(p.memory_bytes, uint64_t{1} << 30);
  EXPECT_EQ(p.compute_units, 132u);
  EXPECT_EQ(p.core_clock_mhz, 1980u);
  EXPECT_EQ(p.memory_clock_mhz, 2619u);
  EXPECT_EQ(p.memory_bus_width_bits, 6144u);
  // 2 (DDR) * 2619 MHz * 6144 bits / 8 = 4022.8 GB/s
  EXPECT_NEAR(p.peak_memory_bandwidth_gbps, 4022.784, 1e-3);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_SIMULATED);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_PEER_COPY);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_KERNELS);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_RESET);
  EXPECT_FALSE(p.capabilities & XAL_DEVICE_CAP_METRICS);  // no NVML
}

// The driver's context functions, from the plugin's simulated driver.
struct ContextCalls {
  CUresult (*get_current)(CUcontext*) = nullptr;
  CUresult (*set_current)(CUcontext) = nullptr;
  CUresult (*retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*release)(CUdevice) = nullptr;
};

ContextCalls context_calls() {
  ContextCalls c;
  void* sim = dlopen(std::getenv("XAL_CUDA_DRIVER"), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (sim == nullptr) return c;
  using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t,
                               CUdriverProcAddressQueryResult*);
  auto get = reinterpret_cast<GetProc>(dlsym(sim, "cuGetProcAddress_v2"));
  auto find = [get](const char* name, int version, auto* out) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status{};
    if (get != nullptr &&
        get(name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) == CUDA_SUCCESS) {
      *out = reinterpret_cast<std::remove_reference_t<decltype(*out)>>(fn);
    }
  };
  find("cuCtxGetCurrent", 4000, &c.get_current);
  find("cuCtxSetCurrent", 4000, &c.set_current);
  find("cuDevicePrimaryCtxRetain", 7000, &c.retain);
  find("cuDevicePrimaryCtxRelease", 11000, &c.release);
  dlclose(sim);
  return c;
}

// A caller that has a context of its own current on the thread (the CUDA
// runtime's, say) gets it back after each call; a thread with none keeps
// the device's, so that a program using xal alone pays no switch per call.
TEST_F(CudaSim, CallersContextIsGivenBack) {
  const ContextCalls c = context_calls();
  ASSERT_TRUE(c.get_current && c.set_current && c.retain && c.release);
  CUcontext own = nullptr;
  ASSERT_EQ(c.retain(&own, 1), CUDA_SUCCESS);
  ASSERT_EQ(c.set_current(own), CUDA_SUCCESS);
  xal_devptr_t ptr = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 256, &ptr), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream_, ptr, 0, 256), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  CUcontext now = nullptr;
  ASSERT_EQ(c.get_current(&now), CUDA_SUCCESS);
  EXPECT_EQ(now, own);
  // A failed call gives it back too.
  EXPECT_EQ(table_->mem_free(dev0_, ptr + 1), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(c.get_current(&now), CUDA_SUCCESS);
  EXPECT_EQ(now, own);
  ASSERT_EQ(c.set_current(nullptr), CUDA_SUCCESS);
  ASSERT_EQ(table_->mem_free(dev0_, ptr), XAL_SUCCESS);
  ASSERT_EQ(c.get_current(&now), CUDA_SUCCESS);
  EXPECT_NE(now, nullptr);
  EXPECT_NE(now, own);
  EXPECT_EQ(c.release(1), CUDA_SUCCESS);
}

TEST_F(CudaSim, DeviceIndexOutOfRange) {
  xal_bdevice_t* dev = nullptr;
  EXPECT_EQ(table_->device_get(backend_, 99, &dev), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("out of range"), std::string::npos);
}

TEST_F(CudaSim, AllocFreeAndInfo) {
  uint64_t free0 = 0, total = 0;
  ASSERT_EQ(table_->mem_get_info(dev0_, &free0, &total), XAL_SUCCESS);
  EXPECT_EQ(total, uint64_t{1} << 30);
  const xal_devptr_t p = alloc(dev0_, 1 << 20);
  ASSERT_NE(p, 0u);
  EXPECT_EQ(p % 256, 0u);
  uint64_t free1 = 0;
  ASSERT_EQ(table_->mem_get_info(dev0_, &free1, &total), XAL_SUCCESS);
  EXPECT_EQ(free0 - free1, uint64_t{1} << 20);
  EXPECT_EQ(table_->mem_free(dev0_, p), XAL_SUCCESS);
  // A second free, and a pointer of the other device, are refused.
  EXPECT_EQ(table_->mem_free(dev0_, p), XAL_ERROR_INVALID_ARGUMENT);
  const xal_devptr_t q = alloc(dev1_, 4096);
  EXPECT_EQ(table_->mem_free(dev0_, q), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->mem_free(dev1_, q), XAL_SUCCESS);
}

TEST_F(CudaSim, OutOfMemoryKeepsTheCudaCode) {
  xal_devptr_t p = 0;
  EXPECT_EQ(table_->mem_alloc(dev0_, size_t{2} << 30, &p),
            XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(last_error().vendor_code, 2);
  EXPECT_EQ(last_error().vendor_name, "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_NE(last_error().message.find("cuMemAlloc"), std::string::npos);
  // Out of memory is not sticky.
  xal_device_health_t h{};
  h.struct_size = sizeof h;
  ASSERT_EQ(table_->device_get_health(dev0_, &h), XAL_SUCCESS);
  EXPECT_EQ(h.state, XAL_HEALTH_OK);
}

TEST_F(CudaSim, CopiesInEveryDirection) {
  for (size_t bytes : {size_t{1}, size_t{255}, size_t{4097}, size_t{1} << 20}) {
    const auto src = pattern(bytes, static_cast<uint8_t>(bytes));
    const xal_devptr_t a = alloc(dev0_, bytes + 64);
    const xal_devptr_t b = alloc(dev0_, bytes + 64);
    std::vector<uint8_t> out(bytes, 0);
    ASSERT_EQ(table_->memcpy_htod(stream0_, a + 3, src.data(), bytes), XAL_SUCCESS);
    ASSERT_EQ(table_->memcpy_dtod(stream0_, b + 1, a + 3, bytes), XAL_SUCCESS);
    ASSERT_EQ(table_->memcpy_dtoh(stream0_, out.data(), b + 1, bytes), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
    EXPECT_EQ(out, src) << bytes << " bytes";
    EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
    EXPECT_EQ(table_->mem_free(dev0_, b), XAL_SUCCESS);
  }
}

TEST_F(CudaSim, ZeroByteCopyIsANoOp) {
  const xal_devptr_t a = alloc(dev0_, 256);
  EXPECT_EQ(table_->memcpy_htod(stream0_, a, nullptr, 0), XAL_SUCCESS);
  EXPECT_EQ(table_->memset(stream0_, a, 1, 0), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
}

TEST_F(CudaSim, CopyPastTheEndIsRefusedByTheDriver) {
  const xal_devptr_t a = alloc(dev0_, 256);
  std::vector<uint8_t> big(1024);
  EXPECT_EQ(table_->memcpy_htod(stream0_, a, big.data(), big.size()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, 1);
  EXPECT_EQ(last_error().vendor_name, "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
}

TEST_F(CudaSim, MemsetFillsTheRange) {
  const size_t n = 10000;
  const xal_devptr_t a = alloc(dev0_, n);
  std::vector<uint8_t> out(n, 0);
  ASSERT_EQ(table_->memset(stream0_, a, 0x5a, n), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream0_, a + 100, 0x11, 17), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_dtoh(stream0_, out.data(), a, n), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t want = (i >= 100 && i < 117) ? 0x11 : 0x5a;
    ASSERT_EQ(out[i], want) << i;
  }
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
}

TEST_F(CudaSim, PeerCopyBetweenDevices) {
  const size_t n = 65536 + 3;
  const auto src = pattern(n, 9);
  const xal_devptr_t a = alloc(dev0_, n);
  const xal_devptr_t b = alloc(dev1_, n);
  std::vector<uint8_t> out(n, 0);
  ASSERT_EQ(table_->memcpy_htod(stream0_, a, src.data(), n), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  // The stream may belong to either device.
  ASSERT_EQ(table_->memcpy_peer(stream1_, dev1_, b, dev0_, a, n), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_dtoh(stream1_, out.data(), b, n), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  EXPECT_EQ(out, src);
  // And back, on the source device's stream; same device is a dtod.
  ASSERT_EQ(table_->memset(stream0_, a, 0, n), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_peer(stream0_, dev0_, a, dev1_, b, n), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_peer(stream0_, dev0_, a, dev0_, a, n), XAL_SUCCESS);
  std::fill(out.begin(), out.end(), 0);
  ASSERT_EQ(table_->memcpy_dtoh(stream0_, out.data(), a, n), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(out, src);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev1_, b), XAL_SUCCESS);
}

TEST_F(CudaSim, HostAllocIsUsableForCopies) {
  const size_t n = 1 << 16;
  void* host = nullptr;
  ASSERT_EQ(table_->host_alloc(backend_, n, XAL_HOST_ALLOC_DEFAULT, &host),
            XAL_SUCCESS);
  ASSERT_NE(host, nullptr);
  std::memset(host, 0xab, n);
  const xal_devptr_t a = alloc(dev1_, n);
  ASSERT_EQ(table_->memcpy_htod(stream1_, a, host, n), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream1_, a, 0x01, 8), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_dtoh(stream1_, host, a, n), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  const auto* bytes = static_cast<const uint8_t*>(host);
  EXPECT_EQ(bytes[0], 0x01);
  EXPECT_EQ(bytes[8], 0xab);
  EXPECT_EQ(bytes[n - 1], 0xab);
  EXPECT_EQ(table_->mem_free(dev1_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->host_free(backend_, host), XAL_SUCCESS);
  // Freeing it twice is an error.
  EXPECT_EQ(table_->host_free(backend_, host), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_F(CudaSim, HostAllocOfNothingOrOfForeignMemoryIsRefused) {
  void* p = nullptr;
  EXPECT_EQ(table_->host_alloc(backend_, 0, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("0 bytes"), std::string::npos) << last_error().message;
  int local = 0;
  EXPECT_EQ(table_->host_free(backend_, &local), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("did not allocate"), std::string::npos)
      << last_error().message;
}

TEST_F(CudaSim, HostRegisterAndUnregister) {
  std::vector<uint8_t> buffer(8192, 3);
  ASSERT_EQ(table_->host_register(backend_, buffer.data(), buffer.size()),
            XAL_SUCCESS);
  EXPECT_EQ(table_->host_register(backend_, buffer.data(), buffer.size()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, 712);
  EXPECT_EQ(last_error().vendor_name,
            "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED");
  EXPECT_EQ(table_->host_unregister(backend_, buffer.data()), XAL_SUCCESS);
  EXPECT_EQ(table_->host_unregister(backend_, buffer.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("did not register"), std::string::npos)
      << last_error().message;
  // Memory it did not allocate is not the backend's to free.
  ASSERT_EQ(table_->host_register(backend_, buffer.data(), buffer.size()), XAL_SUCCESS);
  EXPECT_EQ(table_->host_free(backend_, buffer.data()), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->host_unregister(backend_, buffer.data()), XAL_SUCCESS);
}

// A device reset frees the reset context's cuMemHostAlloc memory and drops
// its registrations (the simulation as the real driver): host_alloc memory
// is xal's own pages, still there and page-locked again after the reset, and
// so is memory registered through host_register.
TEST_F(CudaSim, PageLockedMemorySurvivesADeviceReset) {
  using PinnedFn = int (*)(const void*);
  auto pinned = reinterpret_cast<PinnedFn>(
      dlsym(RTLD_DEFAULT, "xalsim_host_pinned"));
  if (pinned == nullptr) {
    void* sim = dlopen(std::getenv("XAL_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(sim, nullptr);
    pinned = reinterpret_cast<PinnedFn>(dlsym(sim, "xalsim_host_pinned"));
  }
  ASSERT_NE(pinned, nullptr);
  const size_t n = 3 * 4096 + 5;
  void* host = nullptr;
  ASSERT_EQ(table_->host_alloc(backend_, n, 0, &host), XAL_SUCCESS);
  std::vector<uint8_t> own(8192, 9);
  ASSERT_EQ(table_->host_register(backend_, own.data(), own.size()), XAL_SUCCESS);
  auto* bytes = static_cast<uint8_t*>(host);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 13);
  EXPECT_EQ(pinned(host), 1);
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_create(dev0_, 0, &stream_), XAL_SUCCESS);
  EXPECT_EQ(pinned(host), 1);
  EXPECT_EQ(pinned(own.data()), 1);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(bytes[i], static_cast<uint8_t>(i * 13)) << i;
  // Copies from and back into it on the reset device.
  const xal_devptr_t a = alloc(dev0_, n);
  ASSERT_EQ(table_->memcpy_htod(stream_, a, host, n), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  std::memset(host, 0, n);
  ASSERT_EQ(table_->memcpy_dtoh(stream_, host, a, n), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(bytes[i], static_cast<uint8_t>(i * 13)) << i;
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->host_unregister(backend_, own.data()), XAL_SUCCESS);
  EXPECT_EQ(table_->host_free(backend_, host), XAL_SUCCESS);
  EXPECT_EQ(pinned(host), 0);
}

TEST_F(CudaSim, MetricsReportDriverMemory) {
  const xal_devptr_t a = alloc(dev0_, 1 << 20);
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_EQ(table_->device_get_metrics(dev0_, &m), XAL_SUCCESS);
  EXPECT_TRUE(m.valid & XAL_METRIC_MEMORY_USED);
  EXPECT_TRUE(m.valid & XAL_METRIC_SIMULATED);
  EXPECT_FALSE(m.valid & XAL_METRIC_TEMPERATURE);  // no NVML
  EXPECT_GE(m.memory_used_bytes, uint64_t{1} << 20);
  EXPECT_EQ(m.memory_total_bytes, uint64_t{1} << 30);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
}

}  // namespace
}  // namespace xal::cuda::test
