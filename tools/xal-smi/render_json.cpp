// The JSON view of xal-smi: every field, `valid` decoded, null where the
// backend did not fill a field.
#include "render.hpp"

namespace xal::smi {
namespace {

using nlohmann::json;
using telemetry::DeviceSnapshot;

template <typename T>
json when_valid(const DeviceSnapshot& d, uint64_t bit, T value) {
  return d.has(bit) ? json(value) : json(nullptr);
}

json metrics_json(const DeviceSnapshot& d) {
  const xal_device_metrics_t& m = d.metrics;
  json j = {
      {"valid", m.valid},
      {"valid_names", telemetry::metric_bit_names(m.valid)},
      {"simulated", d.has(XAL_METRIC_SIMULATED)},
      {"utilization_percent",
       when_valid(d, XAL_METRIC_UTILIZATION, m.utilization_percent)},
      {"memory_used_bytes",
       when_valid(d, XAL_METRIC_MEMORY_USED, m.memory_used_bytes)},
      {"memory_total_bytes",
       when_valid(d, XAL_METRIC_MEMORY_TOTAL, m.memory_total_bytes)},
      {"memory_limit_bytes",
       when_valid(d, XAL_METRIC_MEMORY_LIMIT, m.memory_limit_bytes)},
      {"temperature_c", when_valid(d, XAL_METRIC_TEMPERATURE, m.temperature_c)},
      {"power_w", when_valid(d, XAL_METRIC_POWER, m.power_w)},
      {"energy_j", when_valid(d, XAL_METRIC_ENERGY, m.energy_j)},
      {"sm_clock_mhz", when_valid(d, XAL_METRIC_SM_CLOCK, m.sm_clock_mhz)},
      {"memory_clock_mhz",
       when_valid(d, XAL_METRIC_MEMORY_CLOCK, m.memory_clock_mhz)},
      {"ecc_corrected", when_valid(d, XAL_METRIC_ECC_CORRECTED, m.ecc_corrected)},
      {"ecc_uncorrected",
       when_valid(d, XAL_METRIC_ECC_UNCORRECTED, m.ecc_uncorrected)},
      {"pcie_replays", when_valid(d, XAL_METRIC_PCIE_REPLAYS, m.pcie_replays)},
      {"health", d.has(XAL_METRIC_HEALTH)
                     ? json(telemetry::health_name(m.health))
                     : json(nullptr)},
      {"last_xid", when_valid(d, XAL_METRIC_LAST_XID, m.last_xid)},
      {"job_memory_used_bytes",
       when_valid(d, XAL_METRIC_JOB_MEMORY, m.job_memory_used_bytes)},
      {"job_processes", when_valid(d, XAL_METRIC_JOB_MEMORY, m.job_processes)},
  };
  if (!d.has(XAL_METRIC_XAL_COUNTERS)) {
    j["xal_counters"] = nullptr;
    return j;
  }
  json errors = json::object();
  for (int i = 1; i < XAL_METRICS_ERROR_SLOTS; ++i) {
    if (m.xal_errors[i] != 0) errors[xal_status_name(-i)] = m.xal_errors[i];
  }
  j["xal_counters"] = {
      {"bytes_htod", m.xal_bytes_htod},
      {"bytes_dtoh", m.xal_bytes_dtoh},
      {"bytes_dtod", m.xal_bytes_dtod},
      {"bytes_peer", m.xal_bytes_peer},
      {"collective_calls", m.xal_collective_calls},
      {"collective_bytes", m.xal_collective_bytes},
      {"alloc_bytes_current", m.xal_alloc_bytes_current},
      {"alloc_bytes_peak", m.xal_alloc_bytes_peak},
      {"alloc_count_current", m.xal_alloc_count_current},
      {"faults_injected", m.xal_faults_injected},
      {"errors", errors},
  };
  return j;
}

json device_json(const DeviceSnapshot& d) {
  const xal_device_properties_t& p = d.props;
  json j = {
      {"index", d.index},
      {"name", p.name},
      {"vendor", p.vendor},
      {"backend", p.backend},
      {"uuid", tools::format_uuid(p.uuid)},
      {"pci_bus_id", p.pci_bus_id},
      {"parent_index", p.parent_index >= 0 ? json(p.parent_index) : json(nullptr)},
      {"compute_percent", d.compute_percent},
      {"simulated", d.simulated()},
      {"memory_bytes", p.memory_bytes},
      {"memory_free_bytes", d.mem_free ? json(*d.mem_free) : json(nullptr)},
      {"memory_total_bytes", d.mem_total ? json(*d.mem_total) : json(nullptr)},
      {"metrics", metrics_json(d)},
  };
  if (d.health) {
    j["health"] = {{"state", telemetry::health_name(d.health->state)},
                   {"sticky_status", xal_status_name(d.health->sticky_status)},
                   {"vendor_code", d.health->vendor_code},
                   {"message", d.health->message}};
  } else {
    j["health"] = nullptr;
    j["health_error"] = d.health_error;
  }
  if (d.processes) {
    json procs = json::array();
    for (const DeviceSnapshot::JobProcess& p : *d.processes) {
      procs.push_back({{"pid", p.entry.pid},
                       {"name", p.name},
                       {"self", p.entry.is_self != 0},
                       {"memory_bytes", p.entry.memory_bytes},
                       {"limit_bytes", p.entry.limit_bytes}});
    }
    j["processes"] = procs;
  } else {
    j["processes"] = nullptr;  // no shared quota ledger
  }
  if (!d.has_properties()) {  // what the properties would have said is unknown
    for (const char* key : {"name", "vendor", "backend", "uuid", "pci_bus_id", "memory_bytes"}) {
      j[key] = nullptr;
    }
    j["properties_error"] = d.props_error;
  }
  if (!d.mem_error.empty()) j["memory_error"] = d.mem_error;
  if (!d.metrics_error.empty()) j["metrics_error"] = d.metrics_error;
  return j;
}

}  // namespace

json render_json(const telemetry::Snapshot& snap, const std::string& when) {
  json backends = json::array();
  for (const xal_backend_info_t& b : snap.backends) {
    backends.push_back({{"name", b.name},
                        {"version", b.version},
                        {"state", tools::backend_state_label(b.state)},
                        {"status", xal_status_name(b.status)},
                        {"reason", b.reason},
                        {"device_count", b.device_count},
                        {"simulated", (b.flags & XAL_BACKEND_FLAG_SIMULATED) != 0},
                        {"driver_version", b.driver_version}});
  }
  json devices = json::array();
  for (const DeviceSnapshot& d : snap.devices) devices.push_back(device_json(d));
  return {{"abi_version", tools::format_abi_version(snap.abi_version)},
          {"time", when},
          {"scope",
           "xal counters and utilization are those of the reading process; "
           "jobs: xal's accounting of every process of each job"},
          {"backends", backends},
          {"devices", devices},
          {"jobs", render_jobs_json(snap)}};
}

}  // namespace xal::smi
