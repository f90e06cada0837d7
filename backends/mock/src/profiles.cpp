#include "profiles.h"

#include <array>

#include "xal_common/strings.hpp"

namespace xal::mock {

namespace {

constexpr uint64_t GiB = 1024ull * 1024ull * 1024ull;

// Public figures: vendor data sheets (memory, compute units, boost clock,
// bus width, peak bandwidth, board power, dense FP16/BF16 tensor TFLOPS).
// Idle power is a typical reading;
// a clock of 0 means the vendor does not publish it.
// README.md lists the sources; the Ascend figures come from public reports.
const std::array<Profile, 9>& table() {
  static const std::array<Profile, 9> profiles = {{
      {"h100-sxm-80g", "NVIDIA H100 SXM 80GB", "NVIDIA", XAL_DEVICE_KIND_GPU,
       80 * GiB, 132, 1980, 2619, 5120, 3350.0, 0.0, 700.0, 70.0, 0x10de, 989.4},
      {"a100-40g", "NVIDIA A100 SXM4 40GB", "NVIDIA", XAL_DEVICE_KIND_GPU,
       40 * GiB, 108, 1410, 1215, 5120, 1555.0, 0.0, 400.0, 50.0, 0x10de, 312.0},
      {"l4", "NVIDIA L4 24GB", "NVIDIA", XAL_DEVICE_KIND_GPU, 24 * GiB, 58,
       2040, 6251, 192, 300.0, 0.0, 72.0, 16.0, 0x10de, 121.0},
      {"rtx-4090", "NVIDIA GeForce RTX 4090 24GB", "NVIDIA",
       XAL_DEVICE_KIND_GPU, 24 * GiB, 128, 2520, 10501, 384, 1008.0, 0.0,
       450.0, 25.0, 0x10de, 165.2},
      {"mi250x", "AMD Instinct MI250X 128GB", "AMD", XAL_DEVICE_KIND_GPU,
       128 * GiB, 220, 1700, 1600, 8192, 3277.0, 0.0, 560.0, 90.0, 0x1002, 383.0},
      {"mi300x", "AMD Instinct MI300X 192GB", "AMD", XAL_DEVICE_KIND_GPU,
       192 * GiB, 304, 2100, 2600, 8192, 5300.0, 0.0, 750.0, 140.0, 0x1002, 1307.4},
      {"intel-max-1550", "Intel Data Center GPU Max 1550 128GB", "Intel",
       XAL_DEVICE_KIND_GPU, 128 * GiB, 128, 1600, 1600, 8192, 3277.0, 0.0,
       600.0, 100.0, 0x8086, 838.9},
      {"gaudi2", "Intel Gaudi 2 96GB", "Intel", XAL_DEVICE_KIND_ACCELERATOR,
       96 * GiB, 24, 0, 1600, 6144, 2450.0, 0.0, 600.0, 100.0, 0x1da3, 432.0},
      {"ascend-910b", "Huawei Ascend 910B 64GB", "Huawei",
       XAL_DEVICE_KIND_ACCELERATOR, 64 * GiB, 24, 0, 1600, 4096, 1600.0,
       0.0, 400.0, 70.0, 0x19e5, 320.0},
  }};
  return profiles;
}

}  // namespace

std::span<const Profile> builtin_profiles() { return table(); }

std::optional<Profile> find_builtin_profile(std::string_view key) {
  const std::string wanted = common::to_lower(common::trim(key));
  for (const Profile& p : table())
    if (p.key == wanted) return p;
  return std::nullopt;
}

std::string builtin_profile_names() {
  std::string names;
  for (const Profile& p : table()) {
    if (!names.empty()) names += ", ";
    names += p.key;
  }
  return names;
}

}  // namespace xal::mock
