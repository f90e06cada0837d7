#include "errors.h"

#include <cstdio>

#include "status_map.h"
#include "xalsupport/device_checks.h"

namespace xal::levelzero {
namespace {
std::string hex(int64_t code) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(code));
  return text;
}
}  // namespace

xal_status_t check(xal_bdevice_s* device, ze_result_t result, const char* what) {
  if (result == ZE_RESULT_SUCCESS) return XAL_SUCCESS;
  const auto code = static_cast<int64_t>(result);
  const StatusMapping mapping = map_status(code);
  if (mapping.status == XAL_NOT_READY) return XAL_NOT_READY;
  std::string message =
      std::string(what) + " failed: " + mapping.name + " (" + hex(code) + ")";
  if (device != nullptr) {
    message += " on Level Zero device " + std::to_string(device->index);
    if (mapping.sticky) {
      // The context is lost for every device that shares it.
      std::vector<xal_bdevice_s*> sharing;
      {
        std::lock_guard lock(device->driver->mutex);
        sharing = device->driver->devices;
      }
      for (xal_bdevice_s* other : sharing) {
        std::lock_guard lock(other->mutex);
        other->sticky.record(mapping.status, code, mapping.name, message);
      }
    }
  }
  if (mapping.sticky) message += "; sticky until xal_device_reset";
  return report(mapping.status, code, mapping.name, message);
}

xal_status_t sticky_check(xal_bdevice_s* device) {
  return support::check_sticky(*device, "Level Zero device", device->index);
}

xal_status_t enter(xal_bdevice_s* device, uint64_t generation,
                   const char* what) {
  if (xal_status_t s = support::check_generation(*device, generation, what,
                                                 "Level Zero device", device->index);
      s != XAL_SUCCESS) {
    return s;
  }
  return sticky_check(device);
}

}  // namespace xal::levelzero
