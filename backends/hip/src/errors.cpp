#include "errors.h"

#include "status_map.h"
#include "xalsupport/device_checks.h"

namespace xal::hip {

xal_status_t check(xal_bdevice_s* device, hipError_t result, const char* what) {
  if (result == hipSuccess) return XAL_SUCCESS;
  const StatusMapping mapping = map_status(static_cast<int64_t>(result));
  if (mapping.status == XAL_NOT_READY) return XAL_NOT_READY;
  std::string message = std::string(what) + " failed: " + mapping.name + " (" +
                        std::to_string(static_cast<int>(result)) + ")";
  if (device != nullptr) {
    message += " on HIP device " + std::to_string(device->ordinal);
    if (mapping.sticky) {
      std::lock_guard lock(device->mutex);
      device->sticky.record(mapping.status, static_cast<int64_t>(result),
                            mapping.name, message);
    }
  }
  if (mapping.sticky) message += "; sticky until xal_device_reset";
  return report(mapping.status, static_cast<int64_t>(result), mapping.name,
                message);
}

hipError_t select_device(const HipApi& api, int ordinal) {
  DeviceRestore& restore = t_device_restore;
  if (restore.depth > 0 && !restore.changed && api.hipGetDevice != nullptr) {
    int previous = 0;
    if (api.hipGetDevice(&previous) == hipSuccess) {
      if (previous == ordinal) return hipSuccess;
      restore.previous = previous;
      restore.changed = true;
      restore.set = api.hipSetDevice;
    }
  }
  return api.hipSetDevice(ordinal);
}

xal_status_t sticky_check(xal_bdevice_s* device) {
  return support::check_sticky(*device, "HIP device", device->ordinal);
}

xal_status_t enter(xal_bdevice_s* device) {
  if (xal_status_t status = sticky_check(device); status != XAL_SUCCESS) {
    return status;
  }
  return check(device, select_device(device->backend->api(), device->ordinal),
               "hipSetDevice");
}

xal_status_t enter(xal_bdevice_s* device, uint64_t generation,
                   const char* what) {
  if (xal_status_t s = support::check_generation(*device, generation, what, "HIP device",
                                                 device->ordinal);
      s != XAL_SUCCESS) {
    return s;
  }
  return enter(device);
}

}  // namespace xal::hip
