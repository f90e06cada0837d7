// The table view of xal-smi.
#include <cstdio>
#include <ctime>

#include "render.hpp"
#include "table.hpp"
#include "xal_common/strings.hpp"

namespace xal::smi {
namespace {

using telemetry::DeviceSnapshot;

constexpr const char* kNA = "N/A";

std::string fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
  return buf;
}

std::string health_cell(const DeviceSnapshot& d) {
  if (d.health) {
    std::string text = telemetry::health_name(d.health->state);
    if (d.health->sticky_status != XAL_SUCCESS) {
      text += std::string(" (") + xal_status_name(d.health->sticky_status) + ")";
    }
    return text;
  }
  if (d.has(XAL_METRIC_HEALTH)) return telemetry::health_name(d.metrics.health);
  return kNA;
}

std::string memory_cell(const DeviceSnapshot& d) {
  using common::format_bytes;
  const std::string used = d.has(XAL_METRIC_MEMORY_USED)
                               ? format_bytes(d.metrics.memory_used_bytes)
                               : kNA;
  std::string total = kNA;
  if (d.has(XAL_METRIC_MEMORY_TOTAL)) {
    total = format_bytes(d.metrics.memory_total_bytes);
  } else if (d.props.memory_bytes != 0) {
    total = format_bytes(d.props.memory_bytes);
  }
  std::string text = used + " / " + total;
  std::string notes;
  if (d.has(XAL_METRIC_JOB_MEMORY)) {  // XAL_QUOTA_LEDGER: the whole job's use
    const uint32_t procs = d.metrics.job_processes;
    notes = "job " + format_bytes(d.metrics.job_memory_used_bytes) + " in " +
            std::to_string(procs) + (procs == 1 ? " proc" : " procs");
  }
  if (d.has(XAL_METRIC_MEMORY_LIMIT) && d.metrics.memory_limit_bytes != 0) {
    notes += (notes.empty() ? "" : ", ") + std::string("limit ") +
             format_bytes(d.metrics.memory_limit_bytes);
  }
  if (!notes.empty()) text += " (" + notes + ")";
  return text;
}

std::string clocks_cell(const DeviceSnapshot& d) {
  const std::string sm = d.has(XAL_METRIC_SM_CLOCK)
                             ? std::to_string(d.metrics.sm_clock_mhz)
                             : kNA;
  const std::string mem = d.has(XAL_METRIC_MEMORY_CLOCK)
                              ? std::to_string(d.metrics.memory_clock_mhz)
                              : kNA;
  return sm + " / " + mem + " MHz";
}

std::string ecc_cell(const DeviceSnapshot& d) {
  const std::string c = d.has(XAL_METRIC_ECC_CORRECTED)
                            ? std::to_string(d.metrics.ecc_corrected)
                            : kNA;
  const std::string u = d.has(XAL_METRIC_ECC_UNCORRECTED)
                            ? std::to_string(d.metrics.ecc_uncorrected)
                            : kNA;
  return c + " / " + u;
}

uint64_t error_total(const xal_device_metrics_t& m) {
  uint64_t total = 0;
  for (size_t i = 1; i < XAL_METRICS_ERROR_SLOTS; ++i) total += m.xal_errors[i];
  return total;
}

void device_table(const telemetry::Snapshot& snap, std::ostream& out) {
  Table table({"Idx", "Name", "Backend", "Health", "Util", "Memory used / total",
               "Temp", "Power", "Clocks SM / Mem", "ECC corr / uncorr"},
              {true, false, false, false, true, false, true, true, false,
               false});
  for (const DeviceSnapshot& d : snap.devices) {
    std::string name = d.has_properties() ? d.props.name : "(cannot be read)";
    if (d.props.parent_index >= 0) {
      name += " [part of " + std::to_string(d.props.parent_index) + ", " +
              std::to_string(d.compute_percent) + "%]";
    }
    if (d.simulated()) name += " (sim)";
    table.add_row({
        std::to_string(d.index),
        name,
        d.has_properties() ? d.props.backend : kNA,
        health_cell(d),
        d.has(XAL_METRIC_UTILIZATION)
            ? fixed(d.metrics.utilization_percent, 0) + " %"
            : kNA,
        memory_cell(d),
        d.has(XAL_METRIC_TEMPERATURE) ? fixed(d.metrics.temperature_c, 0) + " C"
                                      : kNA,
        d.has(XAL_METRIC_POWER) ? fixed(d.metrics.power_w, 1) + " W" : kNA,
        clocks_cell(d),
        ecc_cell(d),
    });
  }
  table.print(out);
}

void counter_table(const telemetry::Snapshot& snap, std::ostream& out) {
  using common::format_bytes;
  Table table({"Idx", "HtoD", "DtoH", "DtoD", "Peer", "Coll calls",
               "Coll bytes", "Allocated (peak)", "Allocs", "Errors",
               "Faults"},
              {true, true, true, true, true, true, true, true, true, true,
               true});
  for (const DeviceSnapshot& d : snap.devices) {
    if (!d.has(XAL_METRIC_XAL_COUNTERS)) {
      table.add_row({std::to_string(d.index), kNA, kNA, kNA, kNA, kNA, kNA,
                     kNA, kNA, kNA, kNA});
      continue;
    }
    const xal_device_metrics_t& m = d.metrics;
    table.add_row({std::to_string(d.index), format_bytes(m.xal_bytes_htod),
                   format_bytes(m.xal_bytes_dtoh), format_bytes(m.xal_bytes_dtod),
                   format_bytes(m.xal_bytes_peer),
                   std::to_string(m.xal_collective_calls),
                   format_bytes(m.xal_collective_bytes),
                   format_bytes(m.xal_alloc_bytes_current) + " (" +
                       format_bytes(m.xal_alloc_bytes_peak) + ")",
                   std::to_string(m.xal_alloc_count_current),
                   std::to_string(error_total(m)),
                   std::to_string(m.xal_faults_injected)});
  }
  table.print(out);
}

// The job's processes per card (XAL_QUOTA_LEDGER), as nvidia-smi lists
// them; nothing when no device is in a ledger.
void process_table(const telemetry::Snapshot& snap, std::ostream& out) {
  using common::format_bytes;
  Table table({"Idx", "PID", "Process", "Memory", "Limit"},
              {true, true, false, true, true});
  bool any_ledger = false;
  for (const DeviceSnapshot& d : snap.devices) {
    if (!d.processes) continue;
    any_ledger = true;
    for (const DeviceSnapshot::JobProcess& p : *d.processes) {
      const xal_job_process_t& e = p.entry;
      std::string name = p.name.empty() ? kNA : p.name;
      if (e.is_self) name += " (self)";
      table.add_row({std::to_string(d.index), std::to_string(e.pid), name,
                     format_bytes(e.memory_bytes),
                     e.limit_bytes ? format_bytes(e.limit_bytes) : "none"});
    }
  }
  if (!any_ledger) return;
  out << "\nProcesses of the job on each card (shared quota ledger):\n";
  table.print(out);
}

}  // namespace

std::string local_time_text() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S %Y", &tm);
  return buf;
}

std::string utc_time_iso() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void render_text(const telemetry::Snapshot& snap, const std::string& when,
                 std::ostream& out) {
  out << "xal-smi   ABI " << tools::format_abi_version(snap.abi_version)
      << "   " << when << '\n';
  out << "Backends:";
  if (snap.backends.empty()) out << " none";
  for (const xal_backend_info_t& b : snap.backends) {
    out << "  " << b.name;
    if (b.version[0] != '\0') out << ' ' << b.version;
    out << " (" << tools::backend_state_label(b.state);
    if (b.state == XAL_BACKEND_STATE_LOADED) {
      out << ", " << b.device_count
          << (b.device_count == 1 ? " device" : " devices");
    } else if (b.reason[0] != '\0') {
      out << ": " << b.reason;
    }
    out << ')';
  }
  out << '\n';
  if (snap.devices.empty()) {
    out << "No devices.\n";
    return;
  }
  device_table(snap, out);
  bool any_sim = false;
  bool any_error = false;
  for (const DeviceSnapshot& d : snap.devices) {
    any_sim = any_sim || d.simulated();
    any_error = any_error || !d.metrics_error.empty() || !d.has_properties();
  }
  if (any_sim) {
    out << "(sim): simulated device; temperature and power come from a model "
           "of its profile.\n";
  }
  if (any_error) {
    for (const DeviceSnapshot& d : snap.devices) {
      if (!d.has_properties()) {
        out << "device " << d.index << ": cannot be read: " << d.props_error << '\n';
      }
      if (!d.metrics_error.empty()) {
        out << "device " << d.index << ": metrics unavailable: "
            << d.metrics_error << '\n';
      }
    }
  }
  process_table(snap, out);
  render_jobs_text(snap, out);
  out << "\nxal counters of this process (xal-smi's own xal; a program's "
         "counters and utilization\nare its own; with XAL_QUOTA_LEDGER the "
         "memory column shows the job's use):\n";
  counter_table(snap, out);
}

}  // namespace xal::smi
