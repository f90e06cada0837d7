#include "inventory.hpp"

#include <ostream>
#include <utility>

#include "tool_support.hpp"

namespace xal::info {

using tools::check;
using tools::last_error_text;

namespace {

// One device; a failing call of its own is recorded, never thrown, so that
// one broken device does not hide the others.
DeviceRecord read_device(uint32_t index) {
  DeviceRecord record;
  record.index = index;
  xal_device_t device = nullptr;
  const xal_status_t got = xal_device_get(index, &device);
  if (got != XAL_SUCCESS) {
    record.error = "xal_device_get failed: " + last_error_text(got);
    return record;
  }
  record.props.struct_size = sizeof(record.props);
  const xal_status_t props = xal_device_get_properties(device, &record.props);
  if (props != XAL_SUCCESS) {
    record.error = "xal_device_get_properties failed: " + last_error_text(props);
    return record;
  }
  tools::read_memory(device, record);
  return record;
}

}  // namespace

bool unreadable_devices(const Inventory& inv, const std::string& tool,
                        std::ostream& err) {
  bool any = false;
  for (const DeviceRecord& d : inv.devices) {
    if (d.error.empty()) continue;
    err << tool << ": device " << d.index << " cannot be read: " << d.error << '\n';
    any = true;
  }
  return any;
}

Inventory collect_inventory() {
  Inventory inv;
  inv.abi_version = xal_abi_version();

  uint32_t backend_count = 0;
  check(xal_backend_count(&backend_count), "xal_backend_count");
  for (uint32_t i = 0; i < backend_count; ++i) {
    BackendRecord record;
    record.info.struct_size = sizeof(record.info);
    check(xal_backend_get_info(i, &record.info),
          "xal_backend_get_info(" + std::to_string(i) + ")");
    inv.backends.push_back(record);
  }

  uint32_t device_count = 0;
  check(xal_device_count(&device_count), "xal_device_count");
  for (uint32_t i = 0; i < device_count; ++i) {
    inv.devices.push_back(read_device(i));
  }

  size_t length = 0;
  check(xal_partition_config_errors(nullptr, 0, &length),
        "xal_partition_config_errors");
  std::string text(length + 1, '\0');
  check(xal_partition_config_errors(text.data(), text.size(), nullptr),
        "xal_partition_config_errors");
  text.resize(length);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      end = text.size();
    }
    inv.partition_errors.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return inv;
}

const char* device_kind_name(uint32_t kind) {
  switch (kind) {
    case XAL_DEVICE_KIND_GPU:
      return "GPU";
    case XAL_DEVICE_KIND_CPU:
      return "CPU";
    case XAL_DEVICE_KIND_ACCELERATOR:
      return "ACCELERATOR";
    case XAL_DEVICE_KIND_OTHER:
      return "OTHER";
    default:
      return "UNKNOWN";
  }
}

std::vector<std::string> capability_names(uint64_t caps) {
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {XAL_DEVICE_CAP_PEER_COPY, "peer_copy"},
      {XAL_DEVICE_CAP_HOST_MEMORY, "host_memory"},
      {XAL_DEVICE_CAP_KERNELS, "kernels"},
      {XAL_DEVICE_CAP_COLLECTIVES, "collectives"},
      {XAL_DEVICE_CAP_METRICS, "metrics"},
      {XAL_DEVICE_CAP_EVENT_TIMING, "event_timing"},
      {XAL_DEVICE_CAP_RESET, "reset"},
      {XAL_DEVICE_CAP_SIMULATED, "simulated"},
      {XAL_DEVICE_CAP_PARTITION, "partition"},
      {XAL_DEVICE_CAP_MEM_IMPORT, "mem_import"},
      {XAL_DEVICE_CAP_STREAM_IMPORT, "stream_import"},
      {XAL_DEVICE_CAP_IPC, "ipc"},
      {XAL_DEVICE_CAP_HOST_POINTERS, "host_pointers"},
  };
  std::vector<std::string> names;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if ((caps & bit) != 0) {
      names.emplace_back(name);
    }
  }
  for (unsigned bit = 0; bit < 64; ++bit) {
    const uint64_t mask = uint64_t{1} << bit;
    if ((caps & mask) != 0 && (known & mask) == 0) {
      names.push_back("bit" + std::to_string(bit));
    }
  }
  return names;
}

}  // namespace xal::info
