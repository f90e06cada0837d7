// A simulated rocm-smi (librocm_smi64.so.5) for the HIP simulator's
// devices: same count (XALSIM_HIP_DEVICES) and PCI addresses (bus 0x10 +
// card, XALSIM_HIP_PARTITIONS devices per card, the partition in bits
// [31:28] of the BDFID as ROCm 6 gives it), fixed sensors: 48.5 C edge
// temperature plus 1 C per index, 250 W, 37 % busy, an energy counter
// that starts at 1 MJ (a card's counts from boot) and adds 1 J per read of
// its index, 2 PCIe replays. XALSIM_SMI_FAIL=temp makes the temperature
// read fail. Its functions are defined against the backend's declarations
// (src/rocm_smi_api.h), so that the compiler checks their signatures.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>

#include "rocm_smi_api.h"

#define SMI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgs = 1;
constexpr int kNotSupported = 2;
bool g_initialised = false;
uint32_t g_count = 0;       // XALSIM_HIP_DEVICES at rsmi_init
uint32_t g_partitions = 1;  // XALSIM_HIP_PARTITIONS at rsmi_init
std::map<uint32_t, uint64_t> g_energy_reads;  // per index

bool valid(uint32_t index) { return g_initialised && index < g_count; }

bool failing(const char* what) {
  const char* text = std::getenv("XALSIM_SMI_FAIL");
  return text != nullptr && std::strstr(text, what) != nullptr;
}

}  // namespace

SMI_EXPORT int rsmi_init(uint64_t) {
  const char* partitions = std::getenv("XALSIM_HIP_PARTITIONS");
  g_partitions = partitions != nullptr ? std::strtoul(partitions, nullptr, 10) : 1;
  if (g_partitions == 0) g_partitions = 1;
  const char* count = std::getenv("XALSIM_HIP_DEVICES");
  g_count = count != nullptr ? static_cast<uint32_t>(std::strtoul(count, nullptr, 10)) : 2;
  g_initialised = true;
  return kSuccess;
}

SMI_EXPORT int rsmi_shut_down() {
  g_initialised = false;
  return kSuccess;
}

SMI_EXPORT int rsmi_num_monitor_devices(uint32_t* count) {
  if (count == nullptr || !g_initialised) return kInvalidArgs;
  *count = g_count;
  return kSuccess;
}

SMI_EXPORT int rsmi_dev_pci_id_get(uint32_t index, uint64_t* bdfid) {
  if (bdfid == nullptr || !valid(index)) return kInvalidArgs;
  // Domain 0, bus 0x10 + card, device 0, function 0; partition [31:28].
  *bdfid = (static_cast<uint64_t>(0x10 + index / g_partitions) << 8) |
           (static_cast<uint64_t>(index % g_partitions) << 28);
  return kSuccess;
}

SMI_EXPORT int rsmi_dev_temp_metric_get(uint32_t index, uint32_t, int, int64_t* value) {
  if (value == nullptr || !valid(index)) return kInvalidArgs;
  if (failing("temp")) return kNotSupported;
  *value = 48500 + 1000 * static_cast<int64_t>(index);  // millidegrees
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
  const uint64_t reads = ++g_energy_reads[index];
  *counter = (1000000 + reads) * 1000000;  // 1 MJ, then 1 J per read, in uJ
  *resolution = 1.0f;
  if (timestamp != nullptr) *timestamp = reads;
  return kSuccess;
}

SMI_EXPORT int rsmi_dev_pci_replay_counter_get(uint32_t index, uint64_t* counter) {
  if (counter == nullptr || !valid(index)) return kInvalidArgs;
  *counter = 2;
  return kSuccess;
}
