// The metric families xal-exporter serves, from a telemetry Snapshot.
// Names follow the Prometheus conventions: base units in the name, counters
// end in _total. docs/TELEMETRY.md lists them.
#include <array>
#include <string>

#include "exposition.hpp"

namespace xal::exporter {
namespace {

using telemetry::DeviceSnapshot;

constexpr const char* kGauge = "gauge";
constexpr const char* kCounter = "counter";

Labels device_labels(const DeviceSnapshot& d) {
  const xal_device_properties_t& p = d.props;
  return {{"backend", p.backend},
          {"device", std::to_string(d.index)},
          {"uuid", d.has_properties() ? tools::format_uuid(p.uuid) : ""},
          {"name", p.name},
          {"partition",
           p.parent_index >= 0 ? std::to_string(p.parent_index) : ""},
          {"simulated", d.simulated() ? "true" : "false"}};
}

Labels with(Labels labels, const char* name, const std::string& value) {
  labels.emplace_back(name, value);
  return labels;
}

void info_families(const DeviceSnapshot& d, const Labels& l, Exposition& e) {
  const xal_device_properties_t& p = d.props;
  e.add_count("xal_device_properties_up", kGauge,
              "1 when the device's properties were read, 0 when it cannot be "
              "read (its name, uuid and backend labels are then empty).",
              l, d.has_properties() ? 1 : 0);
  if (d.has_properties()) {
    Labels info = l;
    info.emplace_back("vendor", p.vendor);
    info.emplace_back("pci_bus_id", p.pci_bus_id);
    e.add_count("xal_device_info", kGauge,
                "Static information about a device; the value is always 1.",
                info, 1);
  }
  e.add_count("xal_device_metrics_up", kGauge,
              "1 when the device's metrics were read, 0 when reading failed.",
              l, d.metrics_error.empty() ? 1 : 0);
  if (p.memory_bytes != 0) {
    e.add_count("xal_device_memory_bytes", kGauge,
                "Physical memory of the card in bytes.", l, p.memory_bytes);
  }
  uint32_t state = 0;
  bool known = false;
  if (d.health) {
    state = d.health->state;
    known = true;
  } else if (d.has(XAL_METRIC_HEALTH)) {
    state = d.metrics.health;
    known = true;
  }
  if (known) {
    constexpr std::array<uint32_t, 4> kStates{XAL_HEALTH_OK, XAL_HEALTH_DEGRADED,
                                              XAL_HEALTH_ERROR, XAL_HEALTH_LOST};
    for (const uint32_t s : kStates) {
      e.add_count("xal_device_health", kGauge,
                  "Device health as a state set: 1 for the current state "
                  "(ok, degraded, error, lost), 0 for the others.",
                  with(l, "state", telemetry::health_name(s)), s == state ? 1 : 0);
    }
  }
}

void sensor_families(const DeviceSnapshot& d, const Labels& l, Exposition& e) {
  const xal_device_metrics_t& m = d.metrics;
  e.add("xal_compute_share_ratio", kGauge,
        "Share of the card's time the device may use: a partition's compute "
        "share (0..1), 1 for a whole card.",
        l, d.compute_percent / 100.0);
  if (d.has(XAL_METRIC_UTILIZATION)) {
    e.add("xal_utilization_ratio", kGauge,
          "Fraction of recent time the device was busy with work done "
          "through xal by this process (0..1).",
          l, m.utilization_percent / 100.0);
  }
  if (d.has(XAL_METRIC_MEMORY_USED)) {
    e.add_count("xal_memory_used_bytes", kGauge, "Device memory in use, bytes.",
                l, m.memory_used_bytes);
  }
  if (d.has(XAL_METRIC_MEMORY_TOTAL)) {
    e.add_count("xal_memory_total_bytes", kGauge,
                "Device memory in total, bytes.", l, m.memory_total_bytes);
  }
  if (d.has(XAL_METRIC_MEMORY_LIMIT) && m.memory_limit_bytes != 0) {
    e.add_count("xal_memory_limit_bytes", kGauge,
                "Memory quota set on the device through xal, bytes.", l,
                m.memory_limit_bytes);
  }
  if (d.has(XAL_METRIC_JOB_MEMORY)) {
    e.add_count("xal_job_memory_used_bytes", kGauge,
                "Device memory held through xal by every process of the job "
                "sharing the quota ledger, bytes.",
                l, m.job_memory_used_bytes);
    e.add_count("xal_job_processes", kGauge,
                "Processes of the job holding memory or a limit on the device.",
                l, m.job_processes);
  }
  if (d.has(XAL_METRIC_TEMPERATURE)) {
    e.add("xal_temperature_celsius", kGauge, "Device temperature, degrees Celsius.",
          l, m.temperature_c);
  }
  if (d.has(XAL_METRIC_POWER)) {
    e.add("xal_power_watts", kGauge, "Device power draw, watts.", l, m.power_w);
  }
  if (d.has(XAL_METRIC_ENERGY)) {
    e.add("xal_energy_joules_total", kCounter,
          "Energy used by the device since xal started, joules.", l, m.energy_j);
  }
  if (d.has(XAL_METRIC_SM_CLOCK)) {
    e.add("xal_sm_clock_hertz", kGauge,
          "Current compute (SM) clock, hertz.", l, m.sm_clock_mhz * 1.0e6);
  }
  if (d.has(XAL_METRIC_MEMORY_CLOCK)) {
    e.add("xal_memory_clock_hertz", kGauge, "Current memory clock, hertz.", l,
          m.memory_clock_mhz * 1.0e6);
  }
  if (d.has(XAL_METRIC_ECC_CORRECTED)) {
    e.add_count("xal_ecc_corrected_errors_total", kCounter,
                "Corrected ECC errors reported by the device.", l,
                m.ecc_corrected);
  }
  if (d.has(XAL_METRIC_ECC_UNCORRECTED)) {
    e.add_count("xal_ecc_uncorrected_errors_total", kCounter,
                "Uncorrected ECC errors reported by the device.", l,
                m.ecc_uncorrected);
  }
  if (d.has(XAL_METRIC_PCIE_REPLAYS)) {
    e.add_count("xal_pcie_replays_total", kCounter,
                "PCIe replay events reported by the device.", l, m.pcie_replays);
  }
  if (d.has(XAL_METRIC_LAST_XID)) {
    e.add_count("xal_last_xid", kGauge,
                "Last vendor error event id (Xid), 0 when none.", l, m.last_xid);
  }
}

void counter_families(const DeviceSnapshot& d, const Labels& l, Exposition& e) {
  if (!d.has(XAL_METRIC_XAL_COUNTERS)) return;
  const xal_device_metrics_t& m = d.metrics;
  const char* copy_help =
      "Bytes copied through xal by this process, by direction.";
  e.add_count("xal_copy_bytes_total", kCounter, copy_help,
              with(l, "direction", "htod"), m.xal_bytes_htod);
  e.add_count("xal_copy_bytes_total", kCounter, copy_help,
              with(l, "direction", "dtoh"), m.xal_bytes_dtoh);
  e.add_count("xal_copy_bytes_total", kCounter, copy_help,
              with(l, "direction", "dtod"), m.xal_bytes_dtod);
  e.add_count("xal_copy_bytes_total", kCounter, copy_help,
              with(l, "direction", "peer"), m.xal_bytes_peer);
  e.add_count("xal_collective_calls_total", kCounter,
              "Collective operations run through xal by this process.", l,
              m.xal_collective_calls);
  e.add_count("xal_collective_bytes_total", kCounter,
              "Bytes sent by collectives through xal by this process.", l,
              m.xal_collective_bytes);
  e.add_count("xal_allocated_bytes", kGauge,
              "Device memory allocated through xal by this process, bytes.", l,
              m.xal_alloc_bytes_current);
  e.add_count("xal_allocated_peak_bytes", kGauge,
              "Peak device memory allocated through xal by this process, "
              "bytes.",
              l, m.xal_alloc_bytes_peak);
  e.add_count("xal_allocations", kGauge,
              "Live allocations made through xal by this process.", l,
              m.xal_alloc_count_current);
  e.add_count("xal_faults_injected_total", kCounter,
              "Faults injected by the fault backend on this device.", l,
              m.xal_faults_injected);
  for (int i = 1; i < XAL_METRICS_ERROR_SLOTS; ++i) {
    e.add_count("xal_errors_total", kCounter,
                "Calls on this device that returned an error, by status.",
                with(l, "status", xal_status_name(-i)), m.xal_errors[i]);
  }
}

}  // namespace

std::string render_exposition(const telemetry::Snapshot& snap,
                              double scrape_seconds) {
  Exposition e;
  for (size_t i = 0; i < snap.backends.size(); ++i) {
    const xal_backend_info_t& b = snap.backends[i];
    // `index` (xal_backend_get_info's) tells apart a backend listed twice.
    e.add_count("xal_backend_info", kGauge,
                "A backend xal considered; the value is always 1.",
                {{"backend", b.name},
                 {"index", std::to_string(i)},
                 {"version", b.version},
                 {"state", tools::backend_state_label(b.state)},
                 {"driver_version", b.driver_version}},
                1);
  }
  for (const DeviceSnapshot& d : snap.devices) {
    const Labels l = device_labels(d);
    info_families(d, l, e);
    sensor_families(d, l, e);
    counter_families(d, l, e);
  }
  job_families(snap, e);
  e.add_count("xal_devices", kGauge, "Devices xal enumerated.", {},
              snap.devices.size());
  e.add("xal_exporter_scrape_duration_seconds", kGauge,
        "Time taken to read every device for this scrape, seconds.", {},
        scrape_seconds);
  return e.text();
}

}  // namespace xal::exporter
