// Devices: properties, health, metrics and reset.
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "metrics.hpp"
#include "mock_harness.hpp"

namespace xal::mock {
namespace {

using test::Instance;
using test::table;

xal_device_properties_t properties(xal_bdevice_t* d) {
  xal_device_properties_t p{};
  p.struct_size = sizeof(p);
  EXPECT_EQ(table().device_get_properties(d, &p), XAL_SUCCESS);
  return p;
}

TEST(Device, PropertiesFromProfiles) {
  Instance inst("1*h100-sxm-80g,2*mi250x,1*ascend-910b");
  ASSERT_EQ(inst.count(), 4u);
  auto h100 = properties(inst.device(0));
  EXPECT_STREQ(h100.name, "Mock NVIDIA H100 SXM 80GB");
  EXPECT_STREQ(h100.vendor, "NVIDIA");
  EXPECT_EQ(h100.kind, static_cast<uint32_t>(XAL_DEVICE_KIND_GPU));
  EXPECT_EQ(h100.compute_units, 132u);
  EXPECT_EQ(h100.memory_bytes, 80ull << 30);
  EXPECT_DOUBLE_EQ(h100.peak_memory_bandwidth_gbps, 3350.0);
  EXPECT_EQ(h100.memory_bus_width_bits, 5120u);
  const uint64_t caps = XAL_DEVICE_CAP_SIMULATED | XAL_DEVICE_CAP_PEER_COPY |
                        XAL_DEVICE_CAP_EVENT_TIMING | XAL_DEVICE_CAP_HOST_MEMORY |
                        XAL_DEVICE_CAP_RESET;
  EXPECT_EQ(h100.capabilities & caps, caps);
  EXPECT_NE(h100.capabilities & XAL_DEVICE_CAP_COLLECTIVES, 0u);
  auto ascend = properties(inst.device(3));
  EXPECT_EQ(ascend.kind, static_cast<uint32_t>(XAL_DEVICE_KIND_ACCELERATOR));
  EXPECT_STREQ(ascend.vendor, "Huawei");
  std::set<std::string> uuids, pci;
  for (uint32_t i = 0; i < 4; ++i) {
    auto p = properties(inst.device(i));
    uuids.insert(std::string(reinterpret_cast<const char*>(p.uuid), 16));
    pci.insert(p.pci_bus_id);
    EXPECT_EQ(std::strlen(p.pci_bus_id), 12u) << p.pci_bus_id;
  }
  EXPECT_EQ(uuids.size(), 4u);
  EXPECT_EQ(pci.size(), 4u);
  // Deterministic: another instance of the same spec gives the same uuids.
  Instance again("1*h100-sxm-80g,2*mi250x,1*ascend-910b");
  auto h100b = properties(again.device(0));
  EXPECT_EQ(std::memcmp(h100.uuid, h100b.uuid, 16), 0);
  xal_device_properties_t small{};
  small.struct_size = 16;
  EXPECT_EQ(table().device_get_properties(inst.device(0), &small), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().device_get_properties(inst.device(0), nullptr), XAL_ERROR_INVALID_ARGUMENT);
  xal_bdevice_t* d = nullptr;
  EXPECT_EQ(table().device_get(inst.backend(), 4, &d), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("index 4"), std::string::npos);
  EXPECT_EQ(table().device_get(inst.backend(), 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().device_count(inst.backend(), nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().device_count(nullptr, nullptr), XAL_ERROR_INVALID_HANDLE);
}

TEST(BusyTracker, WindowAndTotal) {
  using namespace std::chrono;
  BusyTracker t;
  const auto now = steady_clock::now();
  t.add(now - milliseconds(500), now - milliseconds(300));   // inside
  t.add(now - milliseconds(2500), now - milliseconds(2000)); // too old
  EXPECT_NEAR(t.busy_in_window(now), 0.2, 0.011);
  EXPECT_NEAR(t.total_busy_seconds(), 0.7, 1e-9);
  // A task longer than the window fills it.
  t.add(now - seconds(5), now);
  EXPECT_NEAR(t.busy_in_window(now), 1.2, 0.021);
  EXPECT_NEAR(t.total_busy_seconds(), 5.7, 1e-9);
  // Seen from 3 s later, nothing is in the window.
  EXPECT_NEAR(t.busy_in_window(now + seconds(3)), 0.0, 1e-12);
  t.clear();
  EXPECT_EQ(t.busy_in_window(now), 0.0);
  EXPECT_NEAR(t.total_busy_seconds(), 5.7, 1e-9);
  const PowerModel m{50.0, 400.0};
  EXPECT_DOUBLE_EQ(m.power(0.0), 50.0);
  EXPECT_DOUBLE_EQ(m.power(1.0), 400.0);
  EXPECT_DOUBLE_EQ(m.temperature(400.0), 85.0);
}

TEST(Device, HealthIsOk) {
  Instance inst("1*l4");
  xal_device_health_t h{};
  h.struct_size = sizeof(h);
  h.state = 99;
  ASSERT_EQ(table().device_get_health(inst.device(0), &h), XAL_SUCCESS);
  EXPECT_EQ(h.state, static_cast<uint32_t>(XAL_HEALTH_OK));
  EXPECT_EQ(h.sticky_status, XAL_SUCCESS);
  EXPECT_EQ(table().device_get_health(inst.device(0), nullptr), XAL_ERROR_INVALID_ARGUMENT);
}

TEST(Device, MetricsFollowThePowerModel) {
  Instance inst(R"([{"profile": "a100-40g", "memory": "64MiB"}])");
  xal_bdevice_t* d = inst.device(0);
  xal_device_metrics_t m{};
  m.struct_size = sizeof(m);
  ASSERT_EQ(table().device_get_metrics(d, &m), XAL_SUCCESS);
  EXPECT_NE(m.valid & XAL_METRIC_SIMULATED, 0u);
  EXPECT_NE(m.valid & XAL_METRIC_POWER, 0u);
  EXPECT_DOUBLE_EQ(m.utilization_percent, 0.0);
  EXPECT_DOUBLE_EQ(m.power_w, 50.0);  // idle
  EXPECT_NEAR(m.temperature_c, 25.0 + 50.0 * 60.0 / 400.0, 1e-9);
  EXPECT_EQ(m.memory_total_bytes, 64ull << 20);
  EXPECT_EQ(m.sm_clock_mhz, 1410u);
  // Keep the device busy for a while: utilization and power rise.
  xal_bstream_t* s = inst.stream(0);
  xal_bmodule_t* mod = nullptr;
  ASSERT_EQ(table().module_load(d, XAL_MODULE_FORMAT_NATIVE, "sleep_us", 8, &mod), XAL_SUCCESS);
  xal_bkernel_t* sleep = nullptr;
  ASSERT_EQ(table().kernel_get(mod, "sleep_us", &sleep), XAL_SUCCESS);
  xal_launch_config_t cfg{};
  cfg.struct_size = sizeof(cfg);
  cfg.grid[0] = cfg.grid[1] = cfg.grid[2] = 1;
  cfg.block[0] = cfg.block[1] = cfg.block[2] = 1;
  uint64_t us = 200000;
  void* args[] = {&us};
  const xal_devptr_t p = inst.alloc(0, 1 << 20);
  ASSERT_EQ(table().kernel_launch(s, sleep, &cfg, args, 1), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  const auto synced = std::chrono::steady_clock::now();
  xal_device_metrics_t busy{};
  busy.struct_size = sizeof(busy);
  ASSERT_EQ(table().device_get_metrics(d, &busy), XAL_SUCCESS);
  EXPECT_LE(busy.utilization_percent, 100.0);
  EXPECT_LE(busy.power_w, 400.0);
  // The 200 ms of work is inside the 1 s window unless this thread was
  // descheduled for most of a second; only then is there nothing to check.
  if (std::chrono::steady_clock::now() - synced < std::chrono::milliseconds(500)) {
    EXPECT_GT(busy.utilization_percent, 5.0);
    EXPECT_GT(busy.power_w, 50.0);
    EXPECT_GT(busy.temperature_c, m.temperature_c);
  }
  // Energy integrates the busy time whenever it is read: at least
  // (tdp - idle) * 0.2 s more than before.
  EXPECT_GE(busy.energy_j - m.energy_j, (400.0 - 50.0) * 0.2 * 0.99);
  EXPECT_EQ(busy.memory_used_bytes, 1u << 20);
  EXPECT_EQ(table().mem_free(d, p), XAL_SUCCESS);
  EXPECT_EQ(table().device_get_metrics(d, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().module_unload(mod), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

TEST(Device, SynchronizeWaitsForEveryStream) {
  Instance inst(R"([{"profile": "l4", "memory": "16MiB"}])");
  std::vector<xal_bstream_t*> streams;
  std::vector<std::vector<unsigned char>> out(4, std::vector<unsigned char>(1 << 20));
  const xal_devptr_t p = inst.alloc(0, 1 << 20);
  std::vector<unsigned char> src(1 << 20, 9);
  for (int i = 0; i < 4; ++i) {
    streams.push_back(inst.stream(0));
    ASSERT_EQ(table().memcpy_htod(streams[i], p, src.data(), src.size()), XAL_SUCCESS);
    ASSERT_EQ(table().memcpy_dtoh(streams[i], out[i].data(), p, src.size()), XAL_SUCCESS);
  }
  ASSERT_EQ(table().device_synchronize(inst.device(0)), XAL_SUCCESS);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(table().stream_query(streams[i]), XAL_SUCCESS);
    EXPECT_EQ(out[i], src);
    EXPECT_EQ(table().stream_destroy(streams[i]), XAL_SUCCESS);
  }
}

TEST(Device, ResetDropsAllocationsAndEventRecords) {
  Instance inst(R"([{"profile": "mi300x", "memory": "8MiB"}])");
  xal_bdevice_t* d = inst.device(0);
  xal_bstream_t* s = inst.stream(0);
  xal_bevent_t* e = inst.event(0);
  const xal_devptr_t p = inst.alloc(0, 8 << 20);
  std::vector<unsigned char> src(4096, 0xab);
  ASSERT_EQ(table().memcpy_htod(s, p, src.data(), src.size()), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(e, s), XAL_SUCCESS);
  ASSERT_EQ(table().device_reset(d), XAL_SUCCESS);
  uint64_t free = 0, total = 0;
  ASSERT_EQ(table().mem_get_info(d, &free, &total), XAL_SUCCESS);
  EXPECT_EQ(free, total);
  EXPECT_EQ(table().mem_free(d, p), XAL_ERROR_INVALID_ARGUMENT);  // dropped
  float ms = 0;
  EXPECT_EQ(table().event_elapsed_ms(e, e, &ms), XAL_ERROR_INVALID_ARGUMENT);
  // The device works after the reset; the stream and event are still safe.
  const xal_devptr_t q = inst.alloc(0, 4096);
  EXPECT_EQ(q, p);  // the arena starts afresh
  std::vector<unsigned char> back(4096, 1);
  ASSERT_EQ(table().memcpy_dtoh(s, back.data(), q, back.size()), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(e, s), XAL_SUCCESS);
  ASSERT_EQ(table().event_synchronize(e), XAL_SUCCESS);
  EXPECT_EQ(back, std::vector<unsigned char>(4096, 0));  // pages were released
  xal_device_health_t h{};
  h.struct_size = sizeof(h);
  ASSERT_EQ(table().device_get_health(d, &h), XAL_SUCCESS);
  EXPECT_EQ(h.state, static_cast<uint32_t>(XAL_HEALTH_OK));
  EXPECT_EQ(table().event_destroy(e), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

}  // namespace
}  // namespace xal::mock
