// Releasing what the core created: per device (xal_device_reset, shutdown)
// and for the whole runtime (xal_shutdown, a failed xal_init).
#pragma once

#include "runtime.hpp"

namespace xal::core {

// Destroys the streams, events, modules (with their kernels) and frees the
// allocations of `device` through its backend. Errors are ignored.
void release_device_objects(DeviceObj* device) noexcept;

// Aborts (xal_comm_abort) every communicator with a rank on `device` or on
// a partition of it, before the device is reset: the reset takes the
// collective library's state on the device with it. Errors are ignored.
void abort_device_comms(Runtime& rt, DeviceObj* device) noexcept;

// Tears the whole runtime down and deletes it. Safe on a partly built one.
void destroy_runtime(Runtime* rt) noexcept;

}  // namespace xal::core
