// Error reporting shared by every entry of the Level Zero backend.
#pragma once

#include <string>

#include "backend.h"
#include "xalsupport/guarded.h"
#include "xalsupport/report.h"

namespace xal::levelzero {

// set_services (at init), report (detail through services->set_error) and
// guarded (the entries' exception barrier) are shared by the vendor
// backends: backends/support.
using support::guarded;
using support::report;
using support::set_services;

// Maps a ze_result_t of `what` on `device` (may be null) to a status; on an
// error records detail, and on DEVICE_LOST marks every device sharing the
// context. ZE_RESULT_NOT_READY gives XAL_NOT_READY silently. Thread-safe.
xal_status_t check(xal_bdevice_s* device, ze_result_t result, const char* what);

// XAL_SUCCESS, or the device's sticky error (reported again). Thread-safe.
xal_status_t sticky_check(xal_bdevice_s* device);

// sticky_check for an object of `generation`; an object that a reset
// invalidated gives XAL_ERROR_INVALID_HANDLE.
xal_status_t enter(xal_bdevice_s* device, uint64_t generation,
                   const char* what);

}  // namespace xal::levelzero
