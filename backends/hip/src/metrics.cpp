// rocm-smi: loading (XAL_ROCM_SMI_SYMBOLS) and sensor reads.
#include "metrics.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "xalsupport/symbol_table.h"

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
  std::string opened = path;
  if (!path.empty()) {
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  } else {
    for (const char* name : names) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      opened = name;
      if (handle != nullptr) break;
    }
  }
  if (handle == nullptr) {
    *reason = "rocm-smi not found (librocm_smi64.so)";
    return false;
  }
  support::SymbolResolver resolver(support::dlsym_lookup(handle));
#define XAL_ROCM_SMI_RESOLVE(kind, name, since) \
  resolver.resolve(support::SymbolKind::kind, #name, since, name##_);
  XAL_ROCM_SMI_SYMBOLS(XAL_ROCM_SMI_RESOLVE)
#undef XAL_ROCM_SMI_RESOLVE
  if (!resolver.complete()) {
    *reason = resolver.reason("rocm-smi " + opened, rocm_smi_version_text);
    dlclose(handle);
    return false;
  }
  if (const rsmi_status_t status = rsmi_init_(0); status != 0) {
    *reason = "rocm-smi present but rsmi_init failed (" + std::to_string(status) + ")";
    dlclose(handle);
    return false;
  }
  handle_ = handle;
  return true;
}

// Since ROCm 6 the BDFID carries the partition id of an MI300 in CPX/DPX
// mode in bits [31:28] (rocm_smi.h: "((Partition & 0xF) << 28)"; "in some
// devices" in the function bits [2:0] instead), which HIP's PCI bus id
// lacks: the partitions of a card share its address. The candidates are
// matched without the partition bits (and, where too few match so, without
// the function bits either), ordered by partition id, and the `rank`-th is
// taken: HIP and rocm-smi both list a card's partitions in order.
bool RocmSmi::find_index(const std::string& pci_bus_id, uint32_t rank,
                         uint32_t* out_index) const {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (!available() ||
      std::sscanf(pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device,
                  &function) != 4) {
    return false;
  }
  const uint64_t wanted = (static_cast<uint64_t>(domain) << 32) | (bus << 8) |
                          (device << 3) | function;
  constexpr uint64_t kBdf = 0xffffffff0000ffffull;  // domain, bus, device, function
  constexpr uint64_t kFunction = 0x7;
  uint32_t count = 0;
  if (rsmi_num_monitor_devices_(&count) != 0) return false;
  std::vector<std::pair<uint64_t, uint32_t>> exact, any_function;  // (bdfid, index)
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t bdfid = 0;
    if (rsmi_dev_pci_id_get_(i, &bdfid) != 0) continue;
    if ((bdfid & kBdf) == wanted) exact.emplace_back(bdfid, i);
    if ((bdfid & kBdf & ~kFunction) == (wanted & ~kFunction)) {
      any_function.emplace_back(bdfid, i);
    }
  }
  std::vector<std::pair<uint64_t, uint32_t>>& candidates =
      rank < exact.size() ? exact : any_function;
  if (rank >= candidates.size()) return false;
  // By partition id ([31:28], then the function bits), then index.
  auto key = [](const std::pair<uint64_t, uint32_t>& c) {
    return std::make_tuple((c.first >> 28) & 0xf, c.first & kFunction, c.second);
  };
  std::sort(candidates.begin(), candidates.end(),
            [&](const auto& a, const auto& b) { return key(a) < key(b); });
  *out_index = candidates[rank].second;
  return true;
}

bool RocmSmi::energy_uj(uint32_t index, double* out) const {
  uint64_t energy = 0, timestamp = 0;
  float resolution = 0.0f;
  if (!available() || rsmi_dev_energy_count_get_ == nullptr ||
      rsmi_dev_energy_count_get_(index, &energy, &resolution, &timestamp) != 0) {
    return false;
  }
  *out = static_cast<double>(energy) * resolution;
  return true;
}

void RocmSmi::read(uint32_t index, xal_device_metrics_t* out) const {
  if (!available()) return;
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
  uint64_t replays = 0;
  if (rsmi_dev_pci_replay_counter_get_ != nullptr &&
      rsmi_dev_pci_replay_counter_get_(index, &replays) == 0) {
    out->pcie_replays = replays;
    out->valid |= XAL_METRIC_PCIE_REPLAYS;
  }
}

}  // namespace xal::hip
