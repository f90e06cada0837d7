// A point-in-time reading of every backend and device through the public
// ABI: properties, health, memory and metrics. Shared by xal-smi and
// xal-exporter (library xal_telemetry).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ledgers.hpp"
#include "tool_support.hpp"
#include "xal/xal.h"

namespace xal::telemetry {

// With its memory and compute share (tools::MemoryReading).
struct DeviceSnapshot : tools::MemoryReading {
  uint32_t index = 0;
  // Why the device could not be read (xal_device_get or its properties
  // failed; the other readings are still tried); "" when `props` hold its
  // properties.
  std::string props_error;
  xal_device_properties_t props{};
  // xal_device_get_metrics; `metrics.valid` is 0 when the call failed.
  xal_device_metrics_t metrics{};
  std::string metrics_error;  // "" when the metrics were read
  // xal_device_get_health; nullopt when the call failed.
  std::optional<xal_device_health_t> health;
  std::string health_error;
  // xal_device_get_job_processes with the process names (/proc/PID/comm);
  // nullopt when the shared quota ledger is off for the device.
  struct JobProcess {
    xal_job_process_t entry{};
    std::string name;  // "" when the process cannot be looked at
  };
  std::optional<std::vector<JobProcess>> processes;

  // True when bit `bit` (XAL_METRIC_*) of metrics.valid is set.
  bool has(uint64_t bit) const { return (metrics.valid & bit) != 0; }
  bool has_properties() const { return props_error.empty(); }
  bool simulated() const;
};

struct Snapshot {
  uint32_t abi_version = 0;
  std::vector<xal_backend_info_t> backends;
  std::vector<DeviceSnapshot> devices;
  // The jobs' shared ledgers of this user (/dev/shm/xal-ledger-<uid>-*):
  // xal's accounting per job and per process, whichever process reads it.
  std::vector<JobLedger> jobs;
};

// Reads every backend and the devices in `only` (global indices, in that
// order; an index given again is left out; empty: every device). xal_init must have succeeded. A device call that fails is
// recorded in the snapshot (props_error, metrics_error ...) rather than
// thrown, so that one broken device does not hide the others; a failing
// count or an index out of range throws std::runtime_error with xal's error
// detail. Thread-safe as the ABI is (any thread), not against xal_shutdown.
Snapshot take_snapshot(const std::vector<uint32_t>& only = {});

// Writes "<tool>: device N cannot be read: ..." to `err` for each device of
// `snap` whose properties could not be read; true when there was one.
bool unreadable_devices(const Snapshot& snap, const std::string& tool,
                        std::ostream& err);

// Names of the XAL_METRIC_* bits set in `valid` ("utilization", ...).
std::vector<std::string> metric_bit_names(uint64_t valid);

// "ok", "degraded", "error", "lost" (or "unknown").
const char* health_name(uint32_t state);

}  // namespace xal::telemetry
