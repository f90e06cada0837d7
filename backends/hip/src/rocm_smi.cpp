#include "rocm_smi.h"

#include <dlfcn.h>

#include <cstdio>
#include <type_traits>

namespace xal::hip {

RocmSmi::~RocmSmi() {
  if (handle_ != nullptr) {
    if (rsmi_shut_down_ != nullptr) rsmi_shut_down_();
    dlclose(handle_);
  }
}

bool RocmSmi::load(const std::string& path, std::string* reason) {
  const char* names[] = {"librocm_smi64.so.7", "librocm_smi64.so.6",
                         "librocm_smi64.so.5", "librocm_smi64.so.1"};
  void* handle = nullptr;
  if (!path.empty()) {
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  } else {
    for (const char* name : names) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) break;
    }
  }
  if (handle == nullptr) {
    *reason = "rocm-smi not found (librocm_smi64.so)";
    return false;
  }
  auto resolve = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(handle, symbol));
  };
  resolve(rsmi_init_, "rsmi_init");
  resolve(rsmi_shut_down_, "rsmi_shut_down");
  resolve(rsmi_num_monitor_devices_, "rsmi_num_monitor_devices");
  resolve(rsmi_dev_pci_id_get_, "rsmi_dev_pci_id_get");
  resolve(rsmi_dev_temp_metric_get_, "rsmi_dev_temp_metric_get");
  resolve(rsmi_dev_power_ave_get_, "rsmi_dev_power_ave_get");
  resolve(rsmi_dev_busy_percent_get_, "rsmi_dev_busy_percent_get");
  resolve(rsmi_dev_energy_count_get_, "rsmi_dev_energy_count_get");
  resolve(rsmi_dev_pci_replay_counter_get_, "rsmi_dev_pci_replay_counter_get");
  if (rsmi_init_ == nullptr || rsmi_num_monitor_devices_ == nullptr ||
      rsmi_dev_pci_id_get_ == nullptr || rsmi_init_(0) != 0) {
    *reason = "rocm-smi present but rsmi_init failed or symbols missing";
    dlclose(handle);
    return false;
  }
  handle_ = handle;
  return true;
}

bool RocmSmi::find_index(const std::string& pci_bus_id,
                         uint32_t* out_index) const {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device,
                  &function) != 4) {
    return false;
  }
  const uint64_t wanted = (static_cast<uint64_t>(domain) << 32) |
                          (bus << 8) | (device << 3) | function;
  uint32_t count = 0;
  if (rsmi_num_monitor_devices_(&count) != 0) return false;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t bdfid = 0;
    if (rsmi_dev_pci_id_get_(i, &bdfid) == 0 &&
        (bdfid & 0xffffffffffffull) == wanted) {
      *out_index = i;
      return true;
    }
  }
  return false;
}

void RocmSmi::read(const std::string& pci_bus_id,
                   xal_device_metrics_t* out) const {
  uint32_t index = 0;
  if (!available() || !find_index(pci_bus_id, &index)) return;
  int64_t millidegrees = 0;
  // Sensor 0: RSMI_TEMP_TYPE_EDGE; metric 0: RSMI_TEMP_CURRENT.
  if (rsmi_dev_temp_metric_get_ != nullptr &&
      rsmi_dev_temp_metric_get_(index, 0, 0, &millidegrees) == 0) {
    out->temperature_c = static_cast<double>(millidegrees) / 1000.0;
    out->valid |= XAL_METRIC_TEMPERATURE;
  }
  uint64_t microwatts = 0;
  if (rsmi_dev_power_ave_get_ != nullptr &&
      rsmi_dev_power_ave_get_(index, 0, &microwatts) == 0) {
    out->power_w = static_cast<double>(microwatts) / 1e6;
    out->valid |= XAL_METRIC_POWER;
  }
  uint32_t busy = 0;
  if (rsmi_dev_busy_percent_get_ != nullptr &&
      rsmi_dev_busy_percent_get_(index, &busy) == 0) {
    out->utilization_percent = busy;
    out->valid |= XAL_METRIC_UTILIZATION;
  }
  uint64_t energy = 0, timestamp = 0;
  float resolution = 0.0f;
  if (rsmi_dev_energy_count_get_ != nullptr &&
      rsmi_dev_energy_count_get_(index, &energy, &resolution, &timestamp) ==
          0) {
    out->energy_j = static_cast<double>(energy) * resolution / 1e6;
    out->valid |= XAL_METRIC_ENERGY;
  }
  uint64_t replays = 0;
  if (rsmi_dev_pci_replay_counter_get_ != nullptr &&
      rsmi_dev_pci_replay_counter_get_(index, &replays) == 0) {
    out->pcie_replays = replays;
    out->valid |= XAL_METRIC_PCIE_REPLAYS;
  }
}

}  // namespace xal::hip
