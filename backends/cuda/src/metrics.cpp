// metrics.cpp -- NVML loading and sensor reads.
#include "nvml_loader.h"

#include <dlfcn.h>

#include "xalsupport/symbol_table.h"

namespace xal::cuda {

Nvml::~Nvml() {
  if (xid_events_ != nullptr) nvmlEventSetFree(xid_events_);
  if (initialised_ && nvmlShutdown != nullptr) nvmlShutdown();
  if (library_ != nullptr) dlclose(library_);
}

std::unique_ptr<Nvml> Nvml::open(const std::string& path,
                                 std::string* out_reason) {
  std::unique_ptr<Nvml> nvml(new Nvml());
  dlerror();
  nvml->library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (nvml->library_ == nullptr) {
    const char* err = dlerror();
    *out_reason = err != nullptr ? err : path + ": cannot be opened";
    return nullptr;
  }
  support::SymbolResolver resolver(support::dlsym_lookup(nvml->library_));
#define XAL_NVML_RESOLVE(kind, name, since) \
  resolver.resolve(support::SymbolKind::kind, #name, since, nvml->name);
  XAL_NVML_SYMBOLS(XAL_NVML_RESOLVE)
#undef XAL_NVML_RESOLVE
  if (!resolver.complete()) {
    *out_reason = resolver.reason(path, nvml_version_text);
    return nullptr;
  }
  const Return r = nvml->nvmlInit_v2();
  if (r != 0) {
    *out_reason = "nvmlInit_v2 failed with NVML code " + std::to_string(r);
    return nullptr;
  }
  nvml->initialised_ = true;
  return nvml;
}

void* Nvml::find_device(const char* pci_bus_id) const {
  Device device = nullptr;
  if (nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id, &device) != 0) {
    return nullptr;
  }
  return device;
}

void* Nvml::find_device_by_uuid(const char* uuid) const {
  Device device = nullptr;
  if (nvmlDeviceGetHandleByUUID == nullptr ||
      nvmlDeviceGetHandleByUUID(uuid, &device) != 0) {
    return nullptr;
  }
  return device;
}

bool Nvml::energy_mj(void* device, uint64_t* out) const {
  unsigned long long mj = 0;
  if (device == nullptr || nvmlDeviceGetTotalEnergyConsumption == nullptr ||
      nvmlDeviceGetTotalEnergyConsumption(static_cast<Device>(device), &mj) !=
          0) {
    return false;
  }
  *out = mj;
  return true;
}

void Nvml::fill(void* handle, uint64_t energy_base_mj, bool energy_valid,
                xal_device_metrics_t* out) const {
  if (handle == nullptr) return;
  const Device device = static_cast<Device>(handle);
  Utilization util{};
  if (nvmlDeviceGetUtilizationRates != nullptr &&
      nvmlDeviceGetUtilizationRates(device, &util) == 0) {
    out->utilization_percent = util.gpu;
    out->valid |= XAL_METRIC_UTILIZATION;
  }
  Memory memory{};
  if (nvmlDeviceGetMemoryInfo != nullptr &&
      nvmlDeviceGetMemoryInfo(device, &memory) == 0) {
    out->memory_used_bytes = memory.used;
    out->memory_total_bytes = memory.total;
    out->valid |= XAL_METRIC_MEMORY_USED | XAL_METRIC_MEMORY_TOTAL;
  }
  unsigned int value = 0;
  if (nvmlDeviceGetTemperature != nullptr &&
      nvmlDeviceGetTemperature(device, nvml::kTemperatureGpu, &value) == 0) {
    out->temperature_c = value;
    out->valid |= XAL_METRIC_TEMPERATURE;
  }
  if (nvmlDeviceGetPowerUsage != nullptr &&
      nvmlDeviceGetPowerUsage(device, &value) == 0) {
    out->power_w = value / 1000.0;
    out->valid |= XAL_METRIC_POWER;
  }
  uint64_t mj = 0;
  if (energy_valid && energy_mj(handle, &mj) && mj >= energy_base_mj) {
    out->energy_j = static_cast<double>(mj - energy_base_mj) / 1000.0;
    out->valid |= XAL_METRIC_ENERGY;
  }
  if (nvmlDeviceGetClockInfo != nullptr) {
    if (nvmlDeviceGetClockInfo(device, nvml::kClockSm, &value) == 0) {
      out->sm_clock_mhz = value;
      out->valid |= XAL_METRIC_SM_CLOCK;
    }
    if (nvmlDeviceGetClockInfo(device, nvml::kClockMem, &value) == 0) {
      out->memory_clock_mhz = value;
      out->valid |= XAL_METRIC_MEMORY_CLOCK;
    }
  }
  unsigned long long count = 0;
  if (nvmlDeviceGetTotalEccErrors != nullptr) {
    if (nvmlDeviceGetTotalEccErrors(device, nvml::kEccCorrected,
                                    nvml::kEccAggregate, &count) == 0) {
      out->ecc_corrected = count;
      out->valid |= XAL_METRIC_ECC_CORRECTED;
    }
    if (nvmlDeviceGetTotalEccErrors(device, nvml::kEccUncorrected,
                                    nvml::kEccAggregate, &count) == 0) {
      out->ecc_uncorrected = count;
      out->valid |= XAL_METRIC_ECC_UNCORRECTED;
    }
  }
  if (nvmlDeviceGetPcieReplayCounter != nullptr &&
      nvmlDeviceGetPcieReplayCounter(device, &value) == 0) {
    out->pcie_replays = value;
    out->valid |= XAL_METRIC_PCIE_REPLAYS;
  }
}

bool Nvml::watch_xids(void* device, std::string* out_reason) {
  if (device == nullptr) return false;
  if (nvmlEventSetCreate == nullptr || nvmlDeviceRegisterEvents == nullptr ||
      nvmlEventSetWait_v2 == nullptr || nvmlEventSetFree == nullptr) {
    *out_reason = "NVML has no event sets (nvmlEventSetWait_v2 needs NVML 11)";
    return false;
  }
  if (xid_events_ == nullptr) {
    if (const Return r = nvmlEventSetCreate(&xid_events_); r != 0) {
      xid_events_ = nullptr;
      *out_reason = "nvmlEventSetCreate failed with NVML code " + std::to_string(r);
      return false;
    }
  }
  const Return r = nvmlDeviceRegisterEvents(static_cast<Device>(device),
                                            nvml::kEventXidCriticalError, xid_events_);
  if (r != 0) {
    *out_reason = "nvmlDeviceRegisterEvents (Xid) failed with NVML code " +
                  std::to_string(r);
    return false;
  }
  std::lock_guard<std::mutex> lock(xid_mutex_);
  last_xid_[device] = 0;
  return true;
}

uint32_t Nvml::last_xid(void* device) {
  std::lock_guard<std::mutex> lock(xid_mutex_);
  if (xid_events_ == nullptr) return 0;
  // What came since the last read, without waiting (a bounded number per
  // call: a card that reports without end cannot hold the caller).
  constexpr int kMaxEventsPerRead = 256;
  for (int i = 0; i < kMaxEventsPerRead; ++i) {
    EventData event{};
    if (nvmlEventSetWait_v2(xid_events_, &event, 0) != 0) break;  // NVML_ERROR_TIMEOUT: none
    if ((event.eventType & nvml::kEventXidCriticalError) != 0) {
      last_xid_[event.device] = static_cast<uint32_t>(event.eventData);
    }
  }
  const auto it = last_xid_.find(device);
  return it != last_xid_.end() ? it->second : 0;
}

}  // namespace xal::cuda
