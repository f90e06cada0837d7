// rocm-smi (librocm_smi64), loaded with dlopen when present, for sensors.
// Its headers are not packaged for Debian; the few functions used are
// declared here (XAL_ROCM_SMI_SYMBOLS) from the library's documented C ABI.
#pragma once

#include <cstdint>
#include <string>

#include "xal/xal.h"

namespace xal::hip {

// The rocm-smi functions used, in the form of every vendor symbol list:
// X(KIND, name, return, parameters). KIND is REQUIRED (without it rocm-smi
// is not used) or OPTIONAL (that sensor is left out).
#define XAL_ROCM_SMI_SYMBOLS(X)                                                  \
  X(REQUIRED, rsmi_init, int, (uint64_t))                                        \
  X(OPTIONAL, rsmi_shut_down, int, ())                                           \
  X(REQUIRED, rsmi_num_monitor_devices, int, (uint32_t*))                        \
  X(REQUIRED, rsmi_dev_pci_id_get, int, (uint32_t, uint64_t*))                   \
  X(OPTIONAL, rsmi_dev_temp_metric_get, int, (uint32_t, uint32_t, int, int64_t*)) \
  X(OPTIONAL, rsmi_dev_power_ave_get, int, (uint32_t, uint32_t, uint64_t*))      \
  X(OPTIONAL, rsmi_dev_busy_percent_get, int, (uint32_t, uint32_t*))             \
  X(OPTIONAL, rsmi_dev_energy_count_get, int, (uint32_t, uint64_t*, float*, uint64_t*)) \
  X(OPTIONAL, rsmi_dev_pci_replay_counter_get, int, (uint32_t, uint64_t*))

class RocmSmi {
 public:
  RocmSmi() = default;
  RocmSmi(const RocmSmi&) = delete;
  RocmSmi& operator=(const RocmSmi&) = delete;
  ~RocmSmi();

  // Opens `path` or librocm_smi64.so.{6,5,1} and calls rsmi_init. False
  // with `reason` when absent. Not thread-safe; call once at init.
  bool load(const std::string& path, std::string* reason);
  bool available() const { return handle_ != nullptr; }

  // The rocm-smi index of the `rank`-th HIP device (0: the first) at PCI
  // address `pci_bus_id` ("0000:65:00.0"), or false. Thread-safe.
  bool find_index(const std::string& pci_bus_id, uint32_t rank,
                  uint32_t* out_index) const;

  // The energy counter of rocm-smi device `index` in uJ, or false.
  // Thread-safe.
  bool energy_uj(uint32_t index, double* out) const;

  // Fills the sensors it can read for rocm-smi device `index` (all but
  // energy, which the caller counts from its own start) and sets their bits
  // in out->valid. A sensor that fails is left out. Thread-safe (rocm-smi
  // is).
  void read(uint32_t index, xal_device_metrics_t* out) const;

 private:
  void* handle_ = nullptr;
#define XAL_ROCM_SMI_MEMBER(kind, name, ret, params) ret(*name##_) params = nullptr;
  XAL_ROCM_SMI_SYMBOLS(XAL_ROCM_SMI_MEMBER)
#undef XAL_ROCM_SMI_MEMBER
};

}  // namespace xal::hip
