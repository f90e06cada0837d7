// Memory quotas (XAL_MEMORY_LIMIT, xal_device_set_memory_limit).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "runtime.hpp"

namespace xal::core {

struct MemoryLimits {
  std::optional<uint64_t> all;           // "8GiB"
  std::map<uint32_t, uint64_t> devices;  // "0=8GiB,1=2GiB"
};

// Parses XAL_MEMORY_LIMIT. Empty text: no limits.
std::optional<MemoryLimits> parse_memory_limits(std::string_view text,
                                                std::string* error);

// Sets each device's limit from `limits` (global indices).
void apply_memory_limits(Runtime& rt, const MemoryLimits& limits);

// Reserves `bytes` against the device's quota; OUT_OF_MEMORY (with detail)
// when it would pass the limit.
xal_status_t quota_reserve(DeviceObj* device, uint64_t bytes);
void quota_release(DeviceObj* device, uint64_t bytes) noexcept;

}  // namespace xal::core
