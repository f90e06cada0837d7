// Profiles of simulated cards: the built-in table (figures from the vendors'
// public data sheets) and the record every mock device is made from.
// The built-in table is constant; nothing here has mutable global state.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "xal/xal.h"

namespace xal::mock {

struct Profile {
  std::string key;          // built-in name, e.g. "h100-sxm-80g"
  std::string name;         // display name without the "Mock " prefix
  std::string vendor;       // "NVIDIA", "AMD", "Intel", "Huawei"
  uint32_t kind = XAL_DEVICE_KIND_GPU;
  uint64_t memory_bytes = 0;
  uint32_t compute_units = 0;
  uint32_t core_clock_mhz = 0;
  uint32_t memory_clock_mhz = 0;
  uint32_t memory_bus_width_bits = 0;
  double peak_memory_bandwidth_gbps = 0.0;  // GB/s (1e9 B/s)
  double bandwidth_gbps = 0.0;              // copy throttle, 0: none
  double tdp_w = 0.0;                       // board power at full load
  double idle_w = 0.0;                      // board power when idle
  uint16_t pci_vendor_id = 0;               // for the fake PCI bus id
  // Dense FP16/BF16 tensor throughput from the data sheet, TFLOPS; paces
  // the built-in gemm_f32 kernel (times XAL_MOCK_COMPUTE_SCALE). 0: the
  // kernel runs at host speed.
  double tflops_fp16 = 0.0;
};

// The constant built-in table.
std::span<const Profile> builtin_profiles();

// The built-in profile named `key` (case-insensitive), or nullopt.
std::optional<Profile> find_builtin_profile(std::string_view key);

// "a100-40g, h100-sxm-80g, ..." for error messages.
std::string builtin_profile_names();

// The profile used when XAL_MOCK_DEVICES is unset: two of these.
inline constexpr const char* kDefaultDeviceSpec = "2*a100-40g";

}  // namespace xal::mock
