// The HIP backend through its plugin table, on the simulated HIP runtime:
// devices, memory, copies, memset, streams, events, host memory, peer
// copies, code objects and metrics.
#include <dlfcn.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "plugin_fixture.h"

namespace xal::hip::testing {
namespace {

TEST_F(HipPlugin, DescribesItselfAsSimulated) {
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(table_->describe(backend_, &d), XAL_SUCCESS);
  EXPECT_STREQ(d.name, "hip");
  EXPECT_TRUE(d.flags & XAL_BACKEND_FLAG_SIMULATED);
  EXPECT_NE(std::string(d.note).find("simulated driver"), std::string::npos)
      << d.note;
  EXPECT_EQ(std::string(d.note).rfind(
                "verified on a simulated runtime only, not yet on AMD hardware", 0),
            0u)
      << d.note;
  // The same words in the table, for xal-info when init fails.
  EXPECT_STREQ(table_->support_note,
               "verified on a simulated runtime only, not yet on AMD hardware");
  EXPECT_NE(std::string(d.driver_version).find("HIP 5.2"), std::string::npos)
      << d.driver_version;
  uint32_t count = 0;
  ASSERT_EQ(table_->device_count(backend_, &count), XAL_SUCCESS);
  EXPECT_EQ(count, 2u);
}

TEST_F(HipPlugin, DeviceProperties) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(table_->device_get_properties(dev1_, &p), XAL_SUCCESS);
  EXPECT_NE(std::string(p.name).find("MI250X"), std::string::npos);
  EXPECT_STREQ(p.vendor, "AMD");
  EXPECT_EQ(p.kind, static_cast<uint32_t>(XAL_DEVICE_KIND_GPU));
  EXPECT_STREQ(p.pci_bus_id, "0000:11:00.0");
  EXPECT_EQ(p.uuid[15], 1);
  EXPECT_EQ(p.uuid[0], 0xA0);
  EXPECT_EQ(p.memory_bytes, uint64_t{1} << 30);
  EXPECT_EQ(p.compute_units, 110u);
  EXPECT_EQ(p.core_clock_mhz, 1700u);
  EXPECT_EQ(p.memory_clock_mhz, 1600u);
  EXPECT_EQ(p.memory_bus_width_bits, 8192u);
  EXPECT_NEAR(p.peak_memory_bandwidth_gbps, 3276.8, 1e-6);
  const uint64_t want = XAL_DEVICE_CAP_SIMULATED | XAL_DEVICE_CAP_EVENT_TIMING |
                        XAL_DEVICE_CAP_RESET | XAL_DEVICE_CAP_PEER_COPY |
                        XAL_DEVICE_CAP_KERNELS | XAL_DEVICE_CAP_HOST_MEMORY;
  EXPECT_EQ(p.capabilities & want, want);
  // No RCCL on this machine: the core's collectives serve HIP devices.
  EXPECT_EQ(table_->comm_create == nullptr,
            (p.capabilities & XAL_DEVICE_CAP_COLLECTIVES) == 0);
}

// A caller that also uses the HIP runtime on the thread keeps its device:
// each call gives back the device the thread had (the runtime's
// hipSetDevice is per thread).
TEST_F(HipPlugin, CallersDeviceIsGivenBack) {
  void* runtime = dlopen(XAL_HIP_SIM_PATH, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  ASSERT_NE(runtime, nullptr);
  auto set = reinterpret_cast<int (*)(int)>(dlsym(runtime, "hipSetDevice"));
  auto get = reinterpret_cast<int (*)(int*)>(dlsym(runtime, "hipGetDevice"));
  ASSERT_TRUE(set != nullptr && get != nullptr);
  ASSERT_EQ(set(1), 0);
  xal_devptr_t ptr = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 256, &ptr), XAL_SUCCESS);
  int now = -1;
  ASSERT_EQ(get(&now), 0);
  EXPECT_EQ(now, 1);
  EXPECT_EQ(table_->mem_free(dev0_, ptr), XAL_SUCCESS);
  ASSERT_EQ(get(&now), 0);
  EXPECT_EQ(now, 1);
  ASSERT_EQ(set(0), 0);
  dlclose(runtime);
}

TEST_F(HipPlugin, MemoryInfoFollowsAllocations) {
  uint64_t free0 = 0, total = 0;
  ASSERT_EQ(table_->mem_get_info(dev0_, &free0, &total), XAL_SUCCESS);
  EXPECT_EQ(total, uint64_t{1} << 30);
  xal_devptr_t ptr = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 1 << 20, &ptr), XAL_SUCCESS);
  EXPECT_NE(ptr, 0u);
  EXPECT_EQ(ptr % 256, 0u);
  uint64_t free1 = 0;
  ASSERT_EQ(table_->mem_get_info(dev0_, &free1, &total), XAL_SUCCESS);
  EXPECT_EQ(free0 - free1, uint64_t{1} << 20);
  ASSERT_EQ(table_->mem_free(dev0_, ptr), XAL_SUCCESS);
  // A second free, or a pointer of another device, is refused.
  EXPECT_EQ(table_->mem_free(dev0_, ptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("not an allocation"), std::string::npos);
  // More than the card has: OUT_OF_MEMORY with the HIP code kept.
  EXPECT_EQ(table_->mem_alloc(dev0_, size_t{2} << 30, &ptr),
            XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(last_error().vendor_code, 2);
  EXPECT_EQ(last_error().vendor_name, "hipErrorOutOfMemory");
}

TEST_F(HipPlugin, CopiesAllDirectionsOddSizesAndOffsets) {
  for (size_t size : {size_t{1}, size_t{3}, size_t{4093}, size_t{65537}}) {
    for (size_t offset : {size_t{0}, size_t{1}, size_t{7}}) {
      expect_copy_round_trip(size, offset, 31, 7);
    }
  }
}

TEST_F(HipPlugin, MemsetWritesEveryByteOfTheRangeOnly) {
  expect_memset_range(1000, 3, 997, 0xAB);
}

TEST_F(HipPlugin, StreamsAndEventsWithElapsedTime) {
  xal_bevent_t* start = nullptr;
  xal_bevent_t* end = nullptr;
  xal_bevent_t* untimed = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &start), XAL_SUCCESS);
  ASSERT_EQ(table_->event_create(dev0_, 0, &end), XAL_SUCCESS);
  ASSERT_EQ(table_->event_create(dev0_, XAL_EVENT_DISABLE_TIMING, &untimed),
            XAL_SUCCESS);
  xal_bstream_t* other = nullptr;
  ASSERT_EQ(table_->stream_create(dev1_, XAL_STREAM_NON_BLOCKING, &other),
            XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(start, stream_), XAL_SUCCESS);
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 1 << 16, &a), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream_, a, 1, 1 << 16), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(end, stream_), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_wait_event(other, end), XAL_SUCCESS);
  ASSERT_EQ(table_->event_synchronize(end), XAL_SUCCESS);
  EXPECT_EQ(table_->event_query(end), XAL_SUCCESS);
  // Query says SUCCESS once the stream is synchronised (before that it may
  // still be finishing its own bookkeeping: NOT_READY is also correct).
  const xal_status_t busy = table_->stream_query(stream_);
  EXPECT_TRUE(busy == XAL_SUCCESS || busy == XAL_NOT_READY) << busy;
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_query(stream_), XAL_SUCCESS);
  float ms = -1.0f;
  ASSERT_EQ(table_->event_elapsed_ms(start, end, &ms), XAL_SUCCESS);
  EXPECT_GE(ms, 0.0f);
  ASSERT_EQ(table_->event_record(untimed, stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->event_elapsed_ms(start, untimed, &ms),
            XAL_ERROR_INVALID_ARGUMENT);
  // An event and a stream of different devices cannot be paired.
  EXPECT_EQ(table_->event_record(start, other), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->event_destroy(start), XAL_SUCCESS);
  EXPECT_EQ(table_->event_destroy(end), XAL_SUCCESS);
  EXPECT_EQ(table_->event_destroy(untimed), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(other), XAL_SUCCESS);
}

TEST_F(HipPlugin, HostFunctionRunsInStreamOrder) {
  int calls = 0;
  ASSERT_EQ(table_->stream_enqueue_host_func(
                stream_, [](void* user) { ++*static_cast<int*>(user); }, &calls),
            XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(calls, 1);
}

TEST_F(HipPlugin, PageLockedHostMemory) {
  void* host = nullptr;
  ASSERT_EQ(table_->host_alloc(backend_, 4096, XAL_HOST_ALLOC_DEFAULT, &host),
            XAL_SUCCESS);
  ASSERT_NE(host, nullptr);
  std::memset(host, 0x5A, 4096);
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 4096, &a), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_htod(stream_, a, host, 4096), XAL_SUCCESS);
  std::vector<uint8_t> out(4096);
  ASSERT_EQ(table_->memcpy_dtoh(stream_, out.data(), a, 4096), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(out, std::vector<uint8_t>(4096, 0x5A));
  EXPECT_EQ(table_->host_free(backend_, host), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);

  std::vector<uint8_t> mine(8192);
  ASSERT_EQ(table_->host_register(backend_, mine.data(), mine.size()), XAL_SUCCESS);
  EXPECT_EQ(table_->host_register(backend_, mine.data(), mine.size()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_name, "hipErrorHostMemoryAlreadyRegistered");
  EXPECT_EQ(table_->host_unregister(backend_, mine.data()), XAL_SUCCESS);
  EXPECT_EQ(table_->host_unregister(backend_, mine.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, 713);
}

TEST_F(HipPlugin, PeerCopyBetweenDevicesBothWays) {
  constexpr size_t kBytes = 10007;
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, kBytes, &a), XAL_SUCCESS);
  ASSERT_EQ(table_->mem_alloc(dev1_, kBytes, &b), XAL_SUCCESS);
  std::vector<uint8_t> in(kBytes), out(kBytes, 0);
  std::iota(in.begin(), in.end(), uint8_t{9});
  ASSERT_EQ(table_->memcpy_htod(stream_, a, in.data(), kBytes), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_peer(stream_, dev1_, b, dev0_, a, kBytes), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream_, a, 0, kBytes), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_peer(stream_, dev0_, a, dev1_, b, kBytes), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_dtoh(stream_, out.data(), a, kBytes), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(in, out);
  // A pointer of the wrong device is refused by the runtime.
  EXPECT_EQ(table_->memcpy_peer(stream_, dev1_, a, dev0_, b, kBytes),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_name, "hipErrorInvalidValue");
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev1_, b), XAL_SUCCESS);
}

TEST_F(HipPlugin, CodeObjectLoadAndLaunch) {
  const std::string image = "XALSIM-HSACO\nfill_u32\n";
  xal_bmodule_t* module = nullptr;
  ASSERT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_HSACO, image.c_str(),
                                image.size() + 1, &module),
            XAL_SUCCESS)
      << last_error().message;
  xal_bkernel_t* kernel = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "fill_u32", &kernel), XAL_SUCCESS);
  xal_bkernel_t* again = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "fill_u32", &again), XAL_SUCCESS);
  EXPECT_EQ(kernel, again);
  EXPECT_EQ(table_->kernel_get(module, "absent", &again), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_name, "hipErrorNotFound");

  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 64 * sizeof(uint32_t), &a), XAL_SUCCESS);
  uint32_t value = 0xC0FFEE;
  uint64_t n = 64;
  void* args[] = {&a, &value, &n};
  xal_launch_config_t config{sizeof config, {1, 1, 1}, {64, 1, 1}, 0, nullptr};
  ASSERT_EQ(table_->kernel_launch(stream_, kernel, &config, args, 3), XAL_SUCCESS);
  std::vector<uint32_t> out(64);
  ASSERT_EQ(table_->memcpy_dtoh(stream_, out.data(), a, 64 * sizeof(uint32_t)),
            XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(out, std::vector<uint32_t>(64, 0xC0FFEE));
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->module_unload(module), XAL_SUCCESS);

  EXPECT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_SPIRV, image.c_str(),
                                image.size(), &module),
            XAL_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_HSACO, "\x7f" "ELF junk",
                                9, &module),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, 200);
}

TEST_F(HipPlugin, MetricsAndHealthWithoutRocmSmi) {
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_EQ(table_->device_get_metrics(dev0_, &m), XAL_SUCCESS);
  EXPECT_TRUE(m.valid & XAL_METRIC_HEALTH);
  EXPECT_TRUE(m.valid & XAL_METRIC_MEMORY_TOTAL);
  EXPECT_EQ(m.memory_total_bytes, uint64_t{1} << 30);
  EXPECT_EQ(m.health, static_cast<uint32_t>(XAL_HEALTH_OK));
  // A failing memory query leaves the field out, nothing else.
  setenv("XALSIM_HIP_FAIL", "hipMemGetInfo=999", 1);
  xal_device_metrics_t partial{};
  partial.struct_size = sizeof partial;
  ASSERT_EQ(table_->device_get_metrics(dev0_, &partial), XAL_SUCCESS);
  EXPECT_TRUE(partial.valid & XAL_METRIC_HEALTH);
  EXPECT_FALSE(partial.valid & XAL_METRIC_MEMORY_TOTAL);
}

TEST(HipRocmSmi, SensorsOfTheMatchingDeviceAreRead) {
  setenv("XAL_HIP_LIBRARY", XAL_HIP_SIM_PATH, 1);
  setenv("XAL_ROCM_SMI_LIBRARY", XAL_ROCM_SMI_SIM_PATH, 1);
  setenv("XALSIM_HIP_DEVICES", "2", 1);
  unsetenv("XALSIM_SMI_FAIL");
  const xal_backend_table_t* table = plugin_table();
  xal_backend_init_args_t args{sizeof args, test_services(), nullptr};
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(table->init(&args, &backend), XAL_SUCCESS) << last_error().message;
  xal_bdevice_t* device = nullptr;
  ASSERT_EQ(table->device_get(backend, 1, &device), XAL_SUCCESS);
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(table->device_get_properties(device, &p), XAL_SUCCESS);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_METRICS);
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_EQ(table->device_get_metrics(device, &m), XAL_SUCCESS);
  const uint64_t want = XAL_METRIC_TEMPERATURE | XAL_METRIC_POWER |
                        XAL_METRIC_UTILIZATION | XAL_METRIC_ENERGY |
                        XAL_METRIC_PCIE_REPLAYS | XAL_METRIC_MEMORY_TOTAL;
  EXPECT_EQ(m.valid & want, want);
  EXPECT_DOUBLE_EQ(m.temperature_c, 49.5);  // rocm-smi index 1
  EXPECT_DOUBLE_EQ(m.power_w, 250.0);
  EXPECT_DOUBLE_EQ(m.utilization_percent, 37.0);
  EXPECT_EQ(m.pcie_replays, 2u);
  EXPECT_GT(m.energy_j, 0.0);
  // A sensor that fails is left out; the rest still come.
  setenv("XALSIM_SMI_FAIL", "temp", 1);
  xal_device_metrics_t partial{};
  partial.struct_size = sizeof partial;
  ASSERT_EQ(table->device_get_metrics(device, &partial), XAL_SUCCESS);
  EXPECT_FALSE(partial.valid & XAL_METRIC_TEMPERATURE);
  EXPECT_TRUE(partial.valid & XAL_METRIC_POWER);
  unsetenv("XALSIM_SMI_FAIL");
  EXPECT_EQ(table->shutdown(backend), XAL_SUCCESS);
  unsetenv("XAL_ROCM_SMI_LIBRARY");
}

// Starts an instance on the simulated runtime and rocm-smi with `devices`
// devices, `partitions` per card; the caller shuts it down.
xal_backend_t* start_with_rocm_smi(const char* devices, const char* partitions) {
  setenv("XAL_HIP_LIBRARY", XAL_HIP_SIM_PATH, 1);
  setenv("XAL_ROCM_SMI_LIBRARY", XAL_ROCM_SMI_SIM_PATH, 1);
  setenv("XALSIM_HIP_DEVICES", devices, 1);
  setenv("XALSIM_HIP_PARTITIONS", partitions, 1);
  unsetenv("XALSIM_SMI_FAIL");
  xal_backend_init_args_t args{sizeof args, test_services(), nullptr};
  xal_backend_t* backend = nullptr;
  EXPECT_EQ(plugin_table()->init(&args, &backend), XAL_SUCCESS) << last_error().message;
  unsetenv("XAL_ROCM_SMI_LIBRARY");
  unsetenv("XALSIM_HIP_PARTITIONS");
  setenv("XALSIM_HIP_DEVICES", "2", 1);
  return backend;
}

// The partitions of an MI300 in CPX/DPX mode share the card's PCI address,
// and since ROCm 6 rocm-smi adds the partition id to it (bits [31:28]):
// each HIP device still reads its own partition's sensors.
TEST(HipRocmSmi, EachPartitionOfACardReadsItsOwnSensors) {
  xal_backend_t* backend = start_with_rocm_smi("4", "2");
  ASSERT_NE(backend, nullptr);
  const xal_backend_table_t* table = plugin_table();
  for (uint32_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    xal_bdevice_t* device = nullptr;
    ASSERT_EQ(table->device_get(backend, i, &device), XAL_SUCCESS);
    xal_device_properties_t p{};
    p.struct_size = sizeof p;
    ASSERT_EQ(table->device_get_properties(device, &p), XAL_SUCCESS);
    EXPECT_STREQ(p.pci_bus_id, i < 2 ? "0000:10:00.0" : "0000:11:00.0");
    xal_device_metrics_t m{};
    m.struct_size = sizeof m;
    ASSERT_EQ(table->device_get_metrics(device, &m), XAL_SUCCESS);
    ASSERT_TRUE(m.valid & XAL_METRIC_TEMPERATURE);
    EXPECT_DOUBLE_EQ(m.temperature_c, 48.5 + i);  // rocm-smi index i
  }
  EXPECT_EQ(table->shutdown(backend), XAL_SUCCESS);
}

// Energy counts from init: the card's counter (1 MJ at init in the
// simulator, as a counter from boot) adds 1 J per read.
TEST(HipRocmSmi, EnergyCountsFromInit) {
  xal_backend_t* backend = start_with_rocm_smi("2", "1");
  ASSERT_NE(backend, nullptr);
  const xal_backend_table_t* table = plugin_table();
  xal_bdevice_t* device = nullptr;
  ASSERT_EQ(table->device_get(backend, 1, &device), XAL_SUCCESS);
  for (double joules : {1.0, 2.0}) {
    xal_device_metrics_t m{};
    m.struct_size = sizeof m;
    ASSERT_EQ(table->device_get_metrics(device, &m), XAL_SUCCESS);
    ASSERT_TRUE(m.valid & XAL_METRIC_ENERGY);
    EXPECT_DOUBLE_EQ(m.energy_j, joules);
  }
  EXPECT_EQ(table->shutdown(backend), XAL_SUCCESS);
}

}  // namespace
}  // namespace xal::hip::testing
