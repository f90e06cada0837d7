// nvml_loader.h -- device sensors through NVML when libnvidia-ml.so.1 is present.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "nvml_symbols.h"
#include "xal/xal.h"

namespace xal::cuda {

// An open NVML. Thread-safe after open() and the watch_xids() calls of init
// (NVML itself is thread-safe).
class Nvml {
 public:
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // Opens `path` and initialises NVML; null with *out_reason on failure
  // (for a REQUIRED function missing: "<path> is too old: missing nvmlXxx
  // (NVML 5 or newer needed)").
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

  // Watches the card's Xid events (nvmlEventTypeXidCriticalError) from now
  // on; false, with *out_reason, when NVML cannot report them for it (an
  // old NVML, a card or container without events). At init only.
  bool watch_xids(void* device, std::string* out_reason);
  // The card's last Xid since watch_xids(), 0 when none (999: NVML did not
  // know which). Reads the events that came since the last call. Thread-safe.
  uint32_t last_xid(void* device);

 private:
  Nvml() = default;
  void* library_ = nullptr;
  bool initialised_ = false;
  // One event set for every watched card; the Xids read from it so far.
  nvml::EventSet xid_events_ = nullptr;
  std::mutex xid_mutex_;
  std::unordered_map<void*, uint32_t> last_xid_;
  using Return = nvml::Return;
  using Device = nvml::Device;
  using Utilization = nvml::Utilization;
  using Memory = nvml::Memory;
  using EventData = nvml::EventData;
#define XAL_NVML_MEMBER(kind, name, since) decltype(&::name) name = nullptr;
  XAL_NVML_SYMBOLS(XAL_NVML_MEMBER)
#undef XAL_NVML_MEMBER
};

}  // namespace xal::cuda
