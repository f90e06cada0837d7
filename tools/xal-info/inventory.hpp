// What xal-info reports: the backends xal_init considered and the devices
// it enumerated, read through the public ABI only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tool_support.hpp"
#include "xal/xal.h"

namespace xal::info {

struct BackendRecord {
  xal_backend_info_t info{};
};

// With its memory and compute share (tools::MemoryReading).
struct DeviceRecord : tools::MemoryReading {
  uint32_t index = 0;  // global index
  // Why the device could not be read (xal_device_get or its properties
  // failed); "" when `props` hold its properties.
  std::string error;
  xal_device_properties_t props{};
};

struct Inventory {
  uint32_t abi_version = 0;
  std::vector<BackendRecord> backends;
  std::vector<DeviceRecord> devices;
  // xal_partition_config_errors: bad XAL_PARTITIONS entries, one per line.
  std::vector<std::string> partition_errors;
};

// Reads every backend and device. xal_init must have succeeded. A device
// that cannot be read is recorded with its error (DeviceRecord::error), the
// others are read as usual; a failure of the listing itself throws
// std::runtime_error naming the failing call and xal's error detail.
// Not thread-safe against xal_shutdown.
Inventory collect_inventory();

// Writes "<tool>: device N cannot be read: ..." to `err` for each device
// of `inv` that could not be read; true when there was one.
bool unreadable_devices(const Inventory& inv, const std::string& tool,
                        std::ostream& err);

// Helpers for the renderers (the others are in tools/support).
const char* device_kind_name(uint32_t kind);
std::vector<std::string> capability_names(uint64_t caps);

}  // namespace xal::info
