// A simulated rocm-smi (librocm_smi64.so.5) for the HIP simulator's
// devices: same count (XALSIM_HIP_DEVICES) and PCI addresses (bus 0x10 +
// index), fixed sensors: 48.5 C edge temperature, 250 W, 37 % busy, an
// energy counter of 1 J per call, 2 PCIe replays. XALSIM_SMI_FAIL=temp
// makes the temperature read fail.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#define SMI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgs = 1;
constexpr int kNotSupported = 2;
bool g_initialised = false;
uint64_t g_energy_calls = 0;

uint32_t device_count() {
  const char* text = std::getenv("XALSIM_HIP_DEVICES");
  return text != nullptr ? static_cast<uint32_t>(std::strtoul(text, nullptr, 10)) : 2;
}

bool valid(uint32_t index) { return g_initialised && index < device_count(); }

bool failing(const char* what) {
  const char* text = std::getenv("XALSIM_SMI_FAIL");
  return text != nullptr && std::strstr(text, what) != nullptr;
}

}  // namespace

SMI_EXPORT int rsmi_init(uint64_t) {
  g_initialised = true;
  return kSuccess;
}

SMI_EXPORT int rsmi_shut_down() {
  g_initialised = false;
  return kSuccess;
}

SMI_EXPORT int rsmi_num_monitor_devices(uint32_t* count) {
  if (count == nullptr || !g_initialised) return kInvalidArgs;
  *count = device_count();
  return kSuccess;
}

SMI_EXPORT int rsmi_dev_pci_id_get(uint32_t index, uint64_t* bdfid) {
  if (bdfid == nullptr || !valid(index)) return kInvalidArgs;
  *bdfid = static_cast<uint64_t>(0x10 + index) << 8;  // domain 0, bus, dev 0, fn 0
  return kSuccess;
}

SMI_EXPORT int rsmi_dev_temp_metric_get(uint32_t index, uint32_t, int, int64_t* value) {
  if (value == nullptr || !valid(index)) return kInvalidArgs;
  if (failing("temp")) return kNotSupported;
  *value = 48500;  // millidegrees
  return kSuccess;
}

SMI_EXPORT int rsmi_dev_power_ave_get(uint32_t index, uint32_t, uint64_t* microwatts) {
  if (microwatts == nullptr || !valid(index)) return kInvalidArgs;
  *microwatts = 250000000;
  return kSuccess;
}

SMI_EXPORT int rsmi_dev_busy_percent_get(uint32_t index, uint32_t* percent) {
  if (percent == nullptr || !valid(index)) return kInvalidArgs;
  *percent = 37;
  return kSuccess;
}

SMI_EXPORT int rsmi_dev_energy_count_get(uint32_t index, uint64_t* counter,
                                         float* resolution, uint64_t* timestamp) {
  if (counter == nullptr || resolution == nullptr || !valid(index)) return kInvalidArgs;
  *counter = ++g_energy_calls * 1000000;  // 1 J per call at 1 uJ resolution
  *resolution = 1.0f;
  if (timestamp != nullptr) *timestamp = g_energy_calls;
  return kSuccess;
}

SMI_EXPORT int rsmi_dev_pci_replay_counter_get(uint32_t index, uint64_t* counter) {
  if (counter == nullptr || !valid(index)) return kInvalidArgs;
  *counter = 2;
  return kSuccess;
}
