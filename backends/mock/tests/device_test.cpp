// Devices: properties, health, metrics and reset.
#include <chrono>
#include <cstddef>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "metrics.h"
#include "mock_harness.h"

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
  // (Ids of several instances: EachLiveInstanceHasItsOwnIds.)
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

// Records one task [start, end] as a stream does.
void task(BusyTracker& t, BusyTracker::Clock::time_point start,
          BusyTracker::Clock::time_point end) {
  t.begin(start);
  t.end(start, end);
}

// Two live instances of one process (XAL_BACKENDS=mock,mock) show different
// cards: their uuids and PCI bus ids differ. The first instance keeps the
// ids it has in every process (the quota ledger of a job matches cards of
// different processes by uuid), and an ordinal given back is taken again.
TEST(Device, EachLiveInstanceHasItsOwnIds) {
  auto ids = [](const Instance& inst) {
    std::vector<std::string> out;
    for (uint32_t i = 0; i < inst.count(); ++i) {
      const auto p = properties(inst.device(i));
      out.push_back(std::string(reinterpret_cast<const char*>(p.uuid), 16));
      out.push_back(p.pci_bus_id);
    }
    return out;
  };
  // a100-40g#0 of the first instance: the same in every release and process.
  const unsigned char first_uuid[16] = {0xac, 0xea, 0x63, 0x64, 0xd8, 0x1f, 0x55, 0xfd,
                                        0xb4, 0xcb, 0xa4, 0x91, 0xd8, 0xfb, 0x9c, 0x74};
  std::vector<std::string> first;
  {
    Instance a("2*a100-40g");
    Instance b("2*a100-40g");
    first = ids(a);
    const auto second = ids(b);
    ASSERT_EQ(first.size(), 4u);
    EXPECT_EQ(first[0], std::string(reinterpret_cast<const char*>(first_uuid), 16));
    EXPECT_EQ(first[1], "0000:10:00.0");
    EXPECT_EQ(first[3], "0000:11:00.0");
    EXPECT_EQ(second[1], "0001:10:00.0");
    EXPECT_EQ(second[3], "0001:11:00.0");
    std::set<std::string> uuids{first[0], first[2], second[0], second[2]};
    EXPECT_EQ(uuids.size(), 4u);
  }
  Instance again("2*a100-40g");
  EXPECT_EQ(ids(again), first);
}

TEST(BusyTracker, WindowAndTotal) {
  using namespace std::chrono;
  BusyTracker t;
  const auto now = steady_clock::now();
  task(t, now - seconds(8), now - seconds(7));                 // too old
  task(t, now - milliseconds(500), now - milliseconds(300));   // inside
  EXPECT_NEAR(t.busy_in_window(now), 0.2, 0.011);
  EXPECT_NEAR(t.total_busy_seconds(now), 1.2, 1e-9);
  // A task longer than the window fills it.
  task(t, now - milliseconds(200), now + seconds(5));
  const auto later = now + seconds(5);
  EXPECT_NEAR(t.busy_in_window(later), 1.0, 0.021);
  EXPECT_NEAR(t.total_busy_seconds(later), 6.4, 1e-9);
  // Seen from 3 s later, nothing is in the window.
  EXPECT_NEAR(t.busy_in_window(later + seconds(3)), 0.0, 1e-12);
  t.clear();
  EXPECT_EQ(t.busy_in_window(later), 0.0);
  EXPECT_NEAR(t.total_busy_seconds(later), 6.4, 1e-9);
  const PowerModel m{50.0, 400.0};
  EXPECT_DOUBLE_EQ(m.power(0.0), 50.0);
  EXPECT_DOUBLE_EQ(m.power(1.0), 400.0);
  EXPECT_DOUBLE_EQ(m.temperature(400.0), 85.0);
}

// Concurrent tasks count once in the total (the union of their intervals),
// a running one counts up to now, and calls slightly out of order (racing
// threads) never count an instant twice.
TEST(BusyTracker, ConcurrentTasksCountOnce) {
  using namespace std::chrono;
  BusyTracker t;
  const auto t0 = steady_clock::now();
  t.begin(t0);
  t.begin(t0 + milliseconds(100));
  t.end(t0, t0 + milliseconds(300));
  EXPECT_NEAR(t.total_busy_seconds(t0 + milliseconds(400)), 0.4, 1e-9);  // running
  t.end(t0 + milliseconds(100), t0 + milliseconds(500));
  EXPECT_NEAR(t.total_busy_seconds(t0 + seconds(1)), 0.5, 1e-9);
  // A task whose start is reported after the last stretch ended.
  task(t, t0 + milliseconds(400), t0 + milliseconds(600));
  EXPECT_NEAR(t.total_busy_seconds(t0 + seconds(1)), 0.6, 1e-9);
  // The window still adds the streams up (utilization caps it itself).
  EXPECT_NEAR(t.busy_in_window(t0 + seconds(1)), 0.9, 0.011);
}

// Launches the mock's sleep_us kernel `k` on `s` for `us` microseconds (one
// thread).
xal_status_t launch_sleep(xal_bstream_t* s, xal_bkernel_t* k, uint64_t us) {
  xal_launch_config_t cfg{};
  cfg.struct_size = sizeof(cfg);
  cfg.grid[0] = cfg.grid[1] = cfg.grid[2] = 1;
  cfg.block[0] = cfg.block[1] = cfg.block[2] = 1;
  void* args[] = {&us};
  return table().kernel_launch(s, k, &cfg, args, 1);
}

// Two streams each run a 200 ms kernel at the same time: the energy grows
// by at most tdp_w times the time between the two reads.
TEST(Device, EnergyOfConcurrentStreamsStaysWithinTdp) {
  Instance inst(R"([{"profile": "a100-40g", "memory": "16MiB"}])");
  xal_bdevice_t* d = inst.device(0);
  xal_bstream_t* s[2] = {inst.stream(0), inst.stream(0)};
  xal_bmodule_t* mod = nullptr;
  ASSERT_EQ(table().module_load(d, XAL_MODULE_FORMAT_NATIVE, "sleep_us", 8, &mod), XAL_SUCCESS);
  xal_bkernel_t* sleep = nullptr;
  ASSERT_EQ(table().kernel_get(mod, "sleep_us", &sleep), XAL_SUCCESS);
  // Idle first, so that a busy total that counted both kernels would not
  // be hidden by the cap at the device's age.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  xal_device_metrics_t before{}, after{};
  before.struct_size = after.struct_size = sizeof(before);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(table().device_get_metrics(d, &before), XAL_SUCCESS);
  for (xal_bstream_t* stream : s)
    ASSERT_EQ(launch_sleep(stream, sleep, 200000), XAL_SUCCESS);
  for (xal_bstream_t* stream : s) ASSERT_EQ(table().stream_synchronize(stream), XAL_SUCCESS);
  ASSERT_EQ(table().device_get_metrics(d, &after), XAL_SUCCESS);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double tdp = 400.0, idle = 50.0;  // the a100-40g profile
  EXPECT_LE(after.energy_j - before.energy_j, tdp * elapsed * (1 + 1e-9))
      << "elapsed " << elapsed << " s";
  EXPECT_GE(after.energy_j - before.energy_j, (tdp - idle) * 0.2 * 0.99);
  EXPECT_EQ(table().module_unload(mod), XAL_SUCCESS);
  for (xal_bstream_t* stream : s) EXPECT_EQ(table().stream_destroy(stream), XAL_SUCCESS);
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
  const xal_devptr_t p = inst.alloc(0, 1 << 20);
  ASSERT_EQ(launch_sleep(s, sleep, 200000), XAL_SUCCESS);
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

// A caller built with the 1.0 struct (it ends before the job fields) is
// served, and nothing past its struct_size is written.
TEST(Device, MetricsTakeThe10Struct) {
  Instance inst("1*l4");
  constexpr size_t first = offsetof(xal_device_metrics_t, job_memory_used_bytes);
  std::vector<unsigned char> buf(sizeof(xal_device_metrics_t) + 16, 0xAB);
  auto* m = reinterpret_cast<xal_device_metrics_t*>(buf.data());
  m->struct_size = first;
  m->valid = 0;
  ASSERT_EQ(table().device_get_metrics(inst.device(0), m), XAL_SUCCESS)
      << test::last_error().message;
  EXPECT_EQ(m->struct_size, first);
  EXPECT_NE(m->valid & XAL_METRIC_POWER, 0u);
  EXPECT_DOUBLE_EQ(m->power_w, 16.0);  // the l4 idles at 16 W
  for (size_t i = first; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xAB) << "byte " << i;
  m->struct_size = first - 1;
  EXPECT_EQ(table().device_get_metrics(inst.device(0), m), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("expected at least"), std::string::npos);
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
