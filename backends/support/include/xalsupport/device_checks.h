// The checks the entries of the HIP and Level Zero backends run on a device
// before a vendor call: its sticky error and the generation of the object
// used (a reset invalidates the objects of the generation it ends). A
// device is named "<kind> <number>" in messages ("HIP device 0").
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "xal/xal.h"
#include "xalsupport/report.h"

namespace xal::support {

// XAL_SUCCESS, or the sticky error of `device` (device.sticky, a
// StickyError) reported again. Takes device.mutex; thread-safe.
template <typename Device>
xal_status_t check_sticky(Device& device, const char* kind, long long number) {
  std::lock_guard lock(device.mutex);
  if (device.sticky.healthy()) return XAL_SUCCESS;
  return device.sticky.report_again(std::string(kind) + " " + std::to_string(number));
}

// XAL_SUCCESS while `generation` is the device's (device.generation), else
// XAL_ERROR_INVALID_HANDLE, reported as "<what> was invalidated by a reset
// of <kind> <number>". Takes device.mutex; thread-safe.
template <typename Device>
xal_status_t check_generation(Device& device, uint64_t generation, const char* what,
                              const char* kind, long long number) {
  std::lock_guard lock(device.mutex);
  if (generation == device.generation) return XAL_SUCCESS;
  return report(XAL_ERROR_INVALID_HANDLE, 0, nullptr,
                std::string(what) + " was invalidated by a reset of " + kind + " " +
                    std::to_string(number));
}

}  // namespace xal::support
