#include "snapshot.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace xal::telemetry {
namespace {

using tools::check;
using tools::last_error_text;

struct BitName {
  uint64_t bit;
  const char* name;
};

constexpr std::array<BitName, 17> kBitNames{{
    {XAL_METRIC_UTILIZATION, "utilization"},
    {XAL_METRIC_MEMORY_USED, "memory_used"},
    {XAL_METRIC_MEMORY_TOTAL, "memory_total"},
    {XAL_METRIC_MEMORY_LIMIT, "memory_limit"},
    {XAL_METRIC_TEMPERATURE, "temperature"},
    {XAL_METRIC_POWER, "power"},
    {XAL_METRIC_ENERGY, "energy"},
    {XAL_METRIC_SM_CLOCK, "sm_clock"},
    {XAL_METRIC_MEMORY_CLOCK, "memory_clock"},
    {XAL_METRIC_ECC_CORRECTED, "ecc_corrected"},
    {XAL_METRIC_ECC_UNCORRECTED, "ecc_uncorrected"},
    {XAL_METRIC_PCIE_REPLAYS, "pcie_replays"},
    {XAL_METRIC_HEALTH, "health"},
    {XAL_METRIC_XAL_COUNTERS, "xal_counters"},
    {XAL_METRIC_LAST_XID, "last_xid"},
    {XAL_METRIC_JOB_MEMORY, "job_memory"},
    {XAL_METRIC_SIMULATED, "simulated"},
}};


// The job's processes on `device` from the shared quota ledger, nullopt
// when it is off (or the call fails: the table then has no such column).
std::optional<std::vector<DeviceSnapshot::JobProcess>> job_processes(xal_device_t device) {
  uint32_t count = 0;
  if (xal_device_get_job_processes(device, 0, nullptr, &count) != XAL_SUCCESS) {
    return std::nullopt;
  }
  std::vector<xal_job_process_t> entries(count);
  for (xal_job_process_t& e : entries) e.struct_size = sizeof(e);
  if (count > 0 && xal_device_get_job_processes(device, count, entries.data(),
                                                &count) != XAL_SUCCESS) {
    return std::nullopt;
  }
  entries.resize(std::min<size_t>(count, entries.size()));
  std::vector<DeviceSnapshot::JobProcess> out;
  for (const xal_job_process_t& e : entries) {
    std::string name;
    std::ifstream comm("/proc/" + std::to_string(e.pid) + "/comm");
    std::getline(comm, name);
    out.push_back({e, name});
  }
  return out;
}

DeviceSnapshot read_device(uint32_t index) {
  DeviceSnapshot d;
  d.index = index;
  xal_device_t device = nullptr;
  const xal_status_t got = xal_device_get(index, &device);
  if (got != XAL_SUCCESS) {
    d.props_error = "xal_device_get failed: " + last_error_text(got);
    d.props.parent_index = -1;
    return d;
  }
  d.props.struct_size = sizeof(d.props);
  const xal_status_t ps = xal_device_get_properties(device, &d.props);
  if (ps != XAL_SUCCESS) {
    d.props_error = "xal_device_get_properties failed: " + last_error_text(ps);
    d.props = xal_device_properties_t{};
    d.props.parent_index = -1;  // not known to be a partition
  }

  d.metrics.struct_size = sizeof(d.metrics);
  const xal_status_t ms = xal_device_get_metrics(device, &d.metrics);
  if (ms != XAL_SUCCESS) {
    d.metrics_error = last_error_text(ms);
    d.metrics = xal_device_metrics_t{};
  }

  xal_device_health_t health{};
  health.struct_size = sizeof(health);
  const xal_status_t hs = xal_device_get_health(device, &health);
  if (hs == XAL_SUCCESS) {
    d.health = health;
  } else {
    d.health_error = last_error_text(hs);
  }

  tools::read_memory(device, d);
  d.processes = job_processes(device);
  return d;
}

}  // namespace

bool DeviceSnapshot::simulated() const {
  return has(XAL_METRIC_SIMULATED) ||
         (props.capabilities & XAL_DEVICE_CAP_SIMULATED) != 0;
}

Snapshot take_snapshot(const std::vector<uint32_t>& only) {
  Snapshot snap;
  snap.abi_version = xal_abi_version();

  uint32_t backend_count = 0;
  check(xal_backend_count(&backend_count), "xal_backend_count");
  for (uint32_t i = 0; i < backend_count; ++i) {
    xal_backend_info_t info{};
    info.struct_size = sizeof(info);
    check(xal_backend_get_info(i, &info),
          "xal_backend_get_info(" + std::to_string(i) + ")");
    snap.backends.push_back(info);
  }

  snap.jobs = read_job_ledgers();
  uint32_t device_count = 0;
  check(xal_device_count(&device_count), "xal_device_count");
  if (only.empty()) {
    for (uint32_t i = 0; i < device_count; ++i) {
      snap.devices.push_back(read_device(i));
    }
    return snap;
  }
  std::vector<uint32_t> taken;  // an index asked twice is read once
  for (const uint32_t i : only) {
    if (std::find(taken.begin(), taken.end(), i) != taken.end()) continue;
    taken.push_back(i);
    if (i >= device_count) {
      throw std::runtime_error("no device " + std::to_string(i) + " (there " +
                               (device_count == 1 ? "is " : "are ") +
                               std::to_string(device_count) +
                               (device_count == 1 ? " device)" : " devices)"));
    }
    snap.devices.push_back(read_device(i));
  }
  return snap;
}

bool unreadable_devices(const Snapshot& snap, const std::string& tool,
                        std::ostream& err) {
  bool any = false;
  for (const DeviceSnapshot& d : snap.devices) {
    if (d.has_properties()) continue;
    err << tool << ": device " << d.index << " cannot be read: " << d.props_error << '\n';
    any = true;
  }
  return any;
}

std::vector<std::string> metric_bit_names(uint64_t valid) {
  std::vector<std::string> names;
  for (const BitName& b : kBitNames) {
    if ((valid & b.bit) != 0) names.emplace_back(b.name);
  }
  return names;
}

const char* health_name(uint32_t state) {
  switch (state) {
    case XAL_HEALTH_OK:
      return "ok";
    case XAL_HEALTH_DEGRADED:
      return "degraded";
    case XAL_HEALTH_ERROR:
      return "error";
    case XAL_HEALTH_LOST:
      return "lost";
    default:
      return "unknown";
  }
}

}  // namespace xal::telemetry
