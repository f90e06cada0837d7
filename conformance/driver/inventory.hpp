// The platform as libxal sees it (backends, devices, ABI version), and the
// checks of the device options against it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model.hpp"

namespace conform_driver {

// Initialises xal, records backends and devices, shuts xal down. On
// failure returns nullopt and sets `error`.
std::optional<Platform> collect_platform(std::string& error);

// Marks the selected devices from --backend and --device. Returns an error
// message (for exit code 2) or an empty string.
std::string select_devices(Platform& platform, const std::string& backend,
                           const std::vector<int>& devices);

// "d0 Mock NVIDIA A100 40GB [mock]".
std::string device_label(const DeviceEntry& device);

}  // namespace conform_driver
