// Errors inside the mock backend: a typed exception carrying an xal status,
// and the guard that turns any exception into a status at a plugin entry.
#pragma once

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

#include "xal/xal_backend.h"

namespace xal::mock {

// Thrown by the implementation; the entry guard reports it.
class Error : public std::runtime_error {
 public:
  Error(xal_status_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  xal_status_t status() const { return status_; }

 private:
  xal_status_t status_;
};

// "0x7f12ab000000": a device address for messages.
std::string hex(uint64_t value);

// Records `message` as the calling thread's error through `services` (may be
// NULL) and returns `status`.
xal_status_t report(const xal_backend_services_t* services,
                    xal_status_t status, const std::string& message);

// Runs `body` (returning xal_status_t); every exception becomes a status
// with a message: Error -> its status, std::bad_alloc ->
// OUT_OF_HOST_MEMORY, anything else -> INTERNAL. Never throws.
template <class Body>
xal_status_t guarded(const xal_backend_services_t* services, const char* op,
                     Body&& body) noexcept {
  try {
    return body();
  } catch (const Error& e) {
    return report(services, e.status(), e.what());
  } catch (const std::bad_alloc&) {
    return report(services, XAL_ERROR_OUT_OF_HOST_MEMORY,
                  std::string(op) + ": out of host memory");
  } catch (const std::exception& e) {
    return report(services, XAL_ERROR_INTERNAL,
                  std::string(op) + ": internal error: " + e.what());
  } catch (...) {
    return report(services, XAL_ERROR_INTERNAL,
                  std::string(op) + ": unknown internal error");
  }
}

}  // namespace xal::mock
