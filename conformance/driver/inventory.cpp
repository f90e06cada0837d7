// Platform inventory through libxal (see inventory.hpp).
#include "inventory.hpp"

#include <xal/xal.h>
#include <xal_common/strings.hpp>

#include <cstdio>

namespace conform_driver {
namespace {

std::string last_message(xal_status_t status) {
  xal_error_info_t info{};
  info.struct_size = sizeof(info);
  xal_last_error(&info);
  std::string text = xal_status_name(status);
  if (info.message[0] != '\0') text += std::string(": ") + info.message;
  return text;
}

const char* state_name(uint32_t state) {
  switch (state) {
    case XAL_BACKEND_STATE_LOADED: return "loaded";
    case XAL_BACKEND_STATE_UNAVAILABLE: return "unavailable";
    default: return "failed";
  }
}

std::string uuid_text(const uint8_t (&uuid)[16]) {
  std::string out;
  char piece[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    std::snprintf(piece, sizeof(piece), "%02x", uuid[i]);
    out += piece;
  }
  return out;
}

}  // namespace

std::string group_of(const std::string& test_name) {
  const size_t cut = test_name.find_first_of("/.");
  return test_name.substr(0, cut);
}

std::optional<Platform> collect_platform(std::string& error) {
  Platform platform;
  platform.abi_version = xal_abi_version();
  platform.selector = xal::common::env("XAL_DEVICE_SELECTOR").value_or("");
  xal_status_t s = xal_init(nullptr);
  if (s != XAL_SUCCESS) {
    error = "xal_init failed: " + last_message(s);
    return std::nullopt;
  }
  uint32_t count = 0;
  s = xal_backend_count(&count);
  for (uint32_t i = 0; s == XAL_SUCCESS && i < count; ++i) {
    xal_backend_info_t info{};
    info.struct_size = sizeof(info);
    s = xal_backend_get_info(i, &info);
    if (s != XAL_SUCCESS) break;
    BackendEntry b;
    b.name = info.name;
    b.version = info.version;
    b.path = info.path;
    b.state = state_name(info.state);
    b.status = xal_status_name(info.status);
    b.reason = info.reason;
    b.abi_version = info.abi_version;
    b.device_count = info.device_count;
    b.flags = info.flags;
    b.simulated = (info.flags & XAL_BACKEND_FLAG_SIMULATED) != 0;
    b.driver_version = info.driver_version;
    platform.backends.push_back(std::move(b));
  }
  if (s == XAL_SUCCESS) s = xal_device_count(&count);
  for (uint32_t i = 0; s == XAL_SUCCESS && i < count; ++i) {
    xal_device_t dev = nullptr;
    s = xal_device_get(i, &dev);
    xal_device_properties_t p{};
    p.struct_size = sizeof(p);
    if (s == XAL_SUCCESS) s = xal_device_get_properties(dev, &p);
    if (s != XAL_SUCCESS) break;
    DeviceEntry d;
    d.index = i;
    d.name = p.name;
    d.vendor = p.vendor;
    d.backend = p.backend;
    d.uuid = uuid_text(p.uuid);
    d.memory_bytes = p.memory_bytes;
    d.peak_memory_bandwidth_gbps = p.peak_memory_bandwidth_gbps;
    d.capabilities = p.capabilities;
    d.simulated = (p.capabilities & XAL_DEVICE_CAP_SIMULATED) != 0;
    d.selected = true;
    platform.devices.push_back(std::move(d));
  }
  if (s != XAL_SUCCESS) error = "listing the platform failed: " + last_message(s);
  xal_shutdown();
  if (s != XAL_SUCCESS) return std::nullopt;
  return platform;
}

std::string select_devices(Platform& platform, const std::string& backend,
                           const std::vector<int>& devices) {
  std::string listing;
  for (const BackendEntry& b : platform.backends) {
    listing += "\n  " + b.name + " (" + b.state;
    if (b.state != "loaded") listing += ": " + b.reason;
    listing += ")";
  }
  if (platform.devices.empty()) {
    if (!platform.selector.empty()) {
      return "XAL_DEVICE_SELECTOR='" + platform.selector +
             "' matches no device; backends:" + listing;
    }
    return "no device found; backends:" + listing;
  }
  if (!backend.empty()) {
    const BackendEntry* found = nullptr;
    for (const BackendEntry& b : platform.backends) {
      if (b.name == backend) found = &b;
    }
    if (found == nullptr) {
      return "unknown backend '" + backend + "'; backends:" + listing;
    }
    if (found->state != "loaded") {
      return "backend '" + backend + "' is " + found->state + ": " + found->reason;
    }
  }
  std::string device_list;
  for (const DeviceEntry& d : platform.devices) {
    device_list += "\n  " + device_label(d);
  }
  for (int index : devices) {
    if (index < 0 || static_cast<size_t>(index) >= platform.devices.size()) {
      return "unknown device " + std::to_string(index) + "; devices:" + device_list;
    }
  }
  size_t selected = 0;
  for (DeviceEntry& d : platform.devices) {
    bool keep = backend.empty() || d.backend == backend;
    if (!devices.empty()) {
      bool named = false;
      for (int index : devices) named = named || static_cast<uint32_t>(index) == d.index;
      keep = keep && named;
    }
    d.selected = keep;
    selected += keep ? 1 : 0;
  }
  if (selected == 0) {
    return "the options select no device (backend '" + backend +
           "'); devices:" + device_list;
  }
  return {};
}

std::string device_label(const DeviceEntry& device) {
  return "d" + std::to_string(device.index) + " " + device.name + " [" +
         device.backend + "]";
}

}  // namespace conform_driver
