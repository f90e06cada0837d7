// Group "device": properties are sane and consistent, uuids unique, and the
// capability flags match what works.
#include <cstring>
#include <string>

#include "conform.hpp"
#include "events.hpp"
#include "helpers.hpp"

namespace {

using conform::Suite;

class DeviceProps : public conform::DeviceTest {};

TEST_P(DeviceProps, Sane) {
  const xal_device_properties_t& p = props();
  EXPECT_STRNE(p.name, "");
  EXPECT_STRNE(p.vendor, "");
  EXPECT_STRNE(p.backend, "");
  EXPECT_LE(p.kind, static_cast<uint32_t>(XAL_DEVICE_KIND_OTHER));
  EXPECT_EQ(p.index, index()) << "properties.index differs from the index "
                                 "the device was fetched with";
  EXPECT_GT(p.memory_bytes, 0u);
  EXPECT_GT(p.compute_units, 0u);
  // 0 means "unknown" (OpenCL has no query for it); never negative.
  EXPECT_GE(p.peak_memory_bandwidth_gbps, 0.0);
  EXPECT_GT(p.max_allocation_bytes, 0u);
  EXPECT_LE(p.max_allocation_bytes, p.memory_bytes)
      << "largest allocation exceeds the card's memory";
  bool uuid_zero = true;
  for (uint8_t b : p.uuid) uuid_zero = uuid_zero && b == 0;
  EXPECT_FALSE(uuid_zero) << "uuid is all zeros";
  EXPECT_LE(p.parent_index, static_cast<int32_t>(p.index));
  conform::record_figure("memory_bytes", static_cast<double>(p.memory_bytes),
                         "B", static_cast<int>(index()));
  conform::record_figure("peak_memory_bandwidth", p.peak_memory_bandwidth_gbps,
                         "GB/s", static_cast<int>(index()));
}

TEST_P(DeviceProps, StableAndConsistent) {
  xal_device_t again = nullptr;
  XAL_ASSERT_OK(xal_device_get(index(), &again));
  EXPECT_EQ(again, dev()) << "xal_device_get returns another handle";
  xal_device_properties_t p{};
  p.struct_size = sizeof(p);
  XAL_ASSERT_OK(xal_device_get_properties(dev(), &p));
  EXPECT_STREQ(p.name, props().name);
  EXPECT_EQ(std::memcmp(p.uuid, props().uuid, sizeof(p.uuid)), 0);
  EXPECT_EQ(p.memory_bytes, props().memory_bytes);
  // The backend named by the device is loaded and counts this device.
  uint32_t count = 0;
  XAL_ASSERT_OK(xal_backend_count(&count));
  bool found = false;
  for (uint32_t i = 0; i < count; ++i) {
    xal_backend_info_t info{};
    info.struct_size = sizeof(info);
    XAL_ASSERT_OK(xal_backend_get_info(i, &info));
    if (std::strcmp(info.name, p.backend) != 0) continue;
    found = true;
    EXPECT_EQ(info.state, static_cast<uint32_t>(XAL_BACKEND_STATE_LOADED));
    EXPECT_LT(p.backend_index, info.device_count);
    const bool simulated_backend = (info.flags & XAL_BACKEND_FLAG_SIMULATED) != 0;
    const bool simulated_device = (p.capabilities & XAL_DEVICE_CAP_SIMULATED) != 0;
    EXPECT_EQ(simulated_backend, simulated_device)
        << "backend and device disagree on being simulated";
  }
  EXPECT_TRUE(found) << "device names backend '" << p.backend
                     << "', which xal_backend_get_info does not list";
}

// Unique within a backend. Two backends may expose the same card (CUDA and
// OpenCL on one NVIDIA GPU) and then rightly report the same uuid.
TEST_P(DeviceProps, UuidUnique) {
  for (const auto& other : Suite::get().all_devices()) {
    if (other.index == index()) continue;
    if (std::strcmp(other.props.backend, props().backend) != 0) continue;
    EXPECT_NE(std::memcmp(other.props.uuid, props().uuid, 16), 0)
        << "device " << index() << " and device " << other.index
        << " share a uuid";
  }
}

TEST_P(DeviceProps, MemoryInfo) {
  uint64_t free_bytes = 0, total = 0;
  XAL_ASSERT_OK(xal_mem_get_info(dev(), &free_bytes, &total));
  EXPECT_GT(total, 0u);
  EXPECT_LE(free_bytes, total);
  EXPECT_LE(total, props().memory_bytes)
      << "xal_mem_get_info total exceeds the card's memory";
}

TEST_P(DeviceProps, SynchronizeAndHealth) {
  XAL_ASSERT_OK(xal_device_synchronize(dev()));
  xal_device_health_t health{};
  health.struct_size = sizeof(health);
  XAL_ASSERT_OK(xal_device_get_health(dev(), &health));
  EXPECT_EQ(health.state, static_cast<uint32_t>(XAL_HEALTH_OK))
      << "device is not healthy at the start: " << health.message;
  EXPECT_EQ(health.sticky_status, XAL_SUCCESS);
}

TEST_P(DeviceProps, CapabilityEventTiming) {
  conform::Stream stream(dev());
  XAL_ASSERT_OK(stream.status());
  conform::Event a(dev()), b(dev());
  XAL_ASSERT_OK(a.status());
  XAL_ASSERT_OK(b.status());
  XAL_ASSERT_OK(xal_event_record(a.get(), stream.get()));
  XAL_ASSERT_OK(xal_event_record(b.get(), stream.get()));
  XAL_ASSERT_OK(xal_event_synchronize(b.get()));
  float ms = -1.0f;
  const xal_status_t s = xal_event_elapsed_ms(a.get(), b.get(), &ms);
  if (props().capabilities & XAL_DEVICE_CAP_EVENT_TIMING) {
    EXPECT_EQ(s, XAL_SUCCESS) << "EVENT_TIMING claimed: " << conform::describe(s);
    EXPECT_GE(ms, 0.0f);
  } else {
    EXPECT_EQ(s, XAL_ERROR_NOT_SUPPORTED)
        << "EVENT_TIMING not claimed, elapsed gave " << conform::describe(s);
  }
}

TEST_P(DeviceProps, CapabilityHostMemory) {
  if (!(props().capabilities & XAL_DEVICE_CAP_HOST_MEMORY)) {
    XAL_CONFORM_UNSUPPORTED("device does not claim HOST_MEMORY");
  }
  conform::HostBuffer host(1 << 20);
  XAL_ASSERT_OK(host.status());
  ASSERT_NE(host.data(), nullptr);
  conform::DeviceBuffer buf(dev(), host.size());
  XAL_ASSERT_OK(buf.status());
  conform::Stream stream(dev());
  XAL_ASSERT_OK(stream.status());
  conform::fill_pattern(host.span(), 11);
  std::vector<uint8_t> expected(host.data(), host.data() + host.size());
  XAL_ASSERT_OK(xal_memcpy_htod(stream.get(), buf.ptr(), host.data(), host.size()));
  XAL_ASSERT_OK(xal_memset(stream.get(), buf.ptr(), 0, 0));
  XAL_ASSERT_OK(xal_stream_synchronize(stream.get()));
  std::memset(host.data(), 0, host.size());
  XAL_ASSERT_OK(xal_memcpy_dtoh(stream.get(), host.data(), buf.ptr(), host.size()));
  XAL_ASSERT_OK(xal_stream_synchronize(stream.get()));
  const auto diff = conform::first_mismatch(host.span(), expected);
  EXPECT_FALSE(diff) << "page-locked round trip: " << *diff;
}

TEST_P(DeviceProps, CapabilityMetrics) {
  xal_device_metrics_t m{};
  m.struct_size = sizeof(m);
  const xal_status_t s = xal_device_get_metrics(dev(), &m);
  if (props().capabilities & XAL_DEVICE_CAP_METRICS) {
    ASSERT_EQ(s, XAL_SUCCESS) << "METRICS claimed: " << conform::describe(s);
    EXPECT_NE(m.valid, 0u) << "METRICS claimed but no metric is valid";
  } else if (s != XAL_SUCCESS) {
    EXPECT_EQ(s, XAL_ERROR_NOT_SUPPORTED) << conform::describe(s);
  }
  if (s == XAL_SUCCESS && (m.valid & XAL_METRIC_MEMORY_TOTAL)) {
    EXPECT_GT(m.memory_total_bytes, 0u);
  }
}

TEST_P(DeviceProps, CapabilityReset) {
  const xal_status_t s = xal_device_reset(dev());
  if (!(props().capabilities & XAL_DEVICE_CAP_RESET)) {
    EXPECT_EQ(s, XAL_ERROR_NOT_SUPPORTED)
        << "RESET not claimed, reset gave " << conform::describe(s);
    return;
  }
  ASSERT_EQ(s, XAL_SUCCESS) << "RESET claimed: " << conform::describe(s);
  EXPECT_EQ(conform::round_trip(dev()), "") << "after xal_device_reset";
}

XAL_CONFORM_DEVICE_GROUP(device, DeviceProps);

}  // namespace
