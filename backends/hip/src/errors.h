// Error reporting shared by every entry of the HIP backend.
#pragma once

#include <string>

#include "backend.h"
#include "xalsupport/guarded.h"
#include "xalsupport/report.h"

namespace xal::hip {

// set_services (at init), report (detail through services->set_error) and
// guarded (the entries' exception barrier) are shared by the vendor
// backends: backends/support.
using support::guarded;
using support::report;
using support::set_services;

// Maps a HIP result of `what` on `device` (may be null) to a status; on an
// error records detail, and on a sticky code marks the device. Thread-safe.
xal_status_t check(xal_bdevice_s* device, hipError_t result, const char* what);

// XAL_SUCCESS, or the device's sticky error (reported again). Thread-safe.
xal_status_t sticky_check(xal_bdevice_s* device);

// sticky_check, then hipSetDevice(ordinal) on the calling thread.
xal_status_t enter(xal_bdevice_s* device);

// enter() for an object of `generation`; an object that a device reset
// invalidated gives XAL_ERROR_INVALID_HANDLE.
xal_status_t enter(xal_bdevice_s* device, uint64_t generation,
                   const char* what);

}  // namespace xal::hip
