// nvml_loader.h -- device sensors through NVML when libnvidia-ml.so.1 is present.
#pragma once

#include <memory>
#include <string>

#include "nvml_symbols.h"
#include "xal/xal.h"

namespace xal::cuda {

// An open NVML. Thread-safe after open() (NVML itself is thread-safe).
class Nvml {
 public:
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // Opens `path` and initialises NVML; null with *out_reason on failure.
  static std::unique_ptr<Nvml> open(const std::string& path,
                                    std::string* out_reason);

  // The NVML handle of the card at `pci_bus_id`, or null.
  void* find_device(const char* pci_bus_id) const;
  // The NVML handle of the card with this UUID ("GPU-xxxxxxxx-xxxx-...",
  // as NVML and nvidia-smi print it), or null.
  void* find_device_by_uuid(const char* uuid) const;
  // The energy counter in millijoules; false when unavailable.
  bool energy_mj(void* device, uint64_t* out) const;
  // Fills the sensor fields NVML can read and sets their `valid` bits.
  void fill(void* device, uint64_t energy_base_mj, bool energy_valid,
            xal_device_metrics_t* out) const;

 private:
  Nvml() = default;
  void* library_ = nullptr;
  bool initialised_ = false;
#define XAL_NVML_MEMBER(kind, name, ret, params) \
  nvml::ret(*name) params = nullptr;
  using Return = nvml::Return;
  using Device = nvml::Device;
  using Utilization = nvml::Utilization;
  using Memory = nvml::Memory;
  XAL_NVML_SYMBOLS(XAL_NVML_MEMBER)
#undef XAL_NVML_MEMBER
};

}  // namespace xal::cuda
