// The one list of the rocm-smi functions the backend uses for sensors, as
// an X-macro of entries X(KIND, name, since):
//   KIND   REQUIRED (without it rocm-smi is not used: no sensors, and the
//          log names the function) or OPTIONAL (that sensor is left out);
//   since  the first rocm-smi library version providing it, as
//          rsmi_version_get() reports it (major.minor.patch, not the ROCm
//          release), encoded major * 10000 + minor * 100 + patch. Every
//          function here is older than the oldest library the backend
//          opens (librocm_smi64.so.1) or its first version is not stated in
//          AMD's notes; each carries that oldest version, 10000 (1.0.0).
// The function types are the declarations of rocm_smi_api.h.
#pragma once

#include <cstdint>
#include <string>

#include "rocm_smi_api.h"

#define XAL_ROCM_SMI_SYMBOLS(X)                    \
  X(REQUIRED, rsmi_init, 10000)                    \
  X(OPTIONAL, rsmi_shut_down, 10000)               \
  X(REQUIRED, rsmi_num_monitor_devices, 10000)     \
  X(REQUIRED, rsmi_dev_pci_id_get, 10000)          \
  X(OPTIONAL, rsmi_dev_temp_metric_get, 10000)     \
  X(OPTIONAL, rsmi_dev_power_ave_get, 10000)       \
  X(OPTIONAL, rsmi_dev_busy_percent_get, 10000)    \
  X(OPTIONAL, rsmi_dev_energy_count_get, 10000)    \
  X(OPTIONAL, rsmi_dev_pci_replay_counter_get, 10000)

namespace xal::hip {

// "rocm-smi 7.3" for 70300.
inline std::string rocm_smi_version_text(int64_t since) {
  return "rocm-smi " + std::to_string(since / 10000) + "." +
         std::to_string(since / 100 % 100);
}

}  // namespace xal::hip
