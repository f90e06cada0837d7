// rocm-smi (librocm_smi64), loaded with dlopen when present, for sensors:
// the functions of rocm_smi_symbols.h.
#pragma once

#include <cstdint>
#include <string>

#include "rocm_smi_symbols.h"
#include "xal/xal.h"

namespace xal::hip {

class RocmSmi {
 public:
  RocmSmi() = default;
  RocmSmi(const RocmSmi&) = delete;
  RocmSmi& operator=(const RocmSmi&) = delete;
  ~RocmSmi();

  // Opens `path` or librocm_smi64.so.{7,6,5,1} and calls rsmi_init. False
  // with `reason` when absent, too old (a REQUIRED function missing) or
  // rsmi_init fails. Not thread-safe; call once at init.
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
#define XAL_ROCM_SMI_MEMBER(kind, name, since) decltype(&::name) name##_ = nullptr;
  XAL_ROCM_SMI_SYMBOLS(XAL_ROCM_SMI_MEMBER)
#undef XAL_ROCM_SMI_MEMBER
};

}  // namespace xal::hip
