// Error reporting shared by every entry of the Level Zero backend.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "backend.h"

namespace xal::levelzero {

// The services table of the running core (set at init). Thread-safe.
void set_services(const xal_backend_services_t* services);

// Records detail through services->set_error and returns `status`.
xal_status_t report(xal_status_t status, int64_t vendor_code,
                    const char* vendor_name, const std::string& message);

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

// Runs `body` and turns any exception into a status with a message.
template <typename Body>
xal_status_t guarded(const char* operation, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return report(XAL_ERROR_OUT_OF_HOST_MEMORY, 0, nullptr,
                  std::string(operation) + ": out of host memory");
  } catch (const std::exception& error) {
    return report(XAL_ERROR_INTERNAL, 0, nullptr,
                  std::string(operation) + ": " + error.what());
  } catch (...) {
    return report(XAL_ERROR_INTERNAL, 0, nullptr,
                  std::string(operation) + ": unknown exception");
  }
}

}  // namespace xal::levelzero
