// Thread-local error detail of the calling thread and the helpers every
// entry point uses to report a failure (xal_last_error shows the result).
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <sstream>
#include <string>
#include <string_view>

#include "trace.hpp"
#include "xal/xal.h"

namespace xal::core {

struct Backend;
using DeviceObj = ::xal_device_s;

// The operation name of the entry point running on this thread. Initial-exec
// TLS: setting it is one store, not a __tls_get_addr call.
extern constinit thread_local const char* t_operation
    __attribute__((tls_model("initial-exec")));

// Builds a message from pieces: cat("size ", 12, " too big").
template <class... A>
std::string cat(const A&... pieces) {
  std::ostringstream out;
  (out << ... << pieces);
  return out.str();
}

// Formats a device address as 0x...
std::string hex(uint64_t value);

// Records a failure of the core itself (backend name ""). Returns status.
xal_status_t fail(xal_status_t status, std::string_view message);
// Same, counted against `device` in its error counters (device may be null).
xal_status_t fail(DeviceObj* device, xal_status_t status,
                  std::string_view message);
// Records a failure returned by `backend`, taking the detail it gave through
// services->set_error (vendor code, message) when it gave one.
xal_status_t fail_backend(const Backend* backend, DeviceObj* device,
                          xal_status_t status);

// services->set_error for plugins: stores a pending detail.
xal_status_t backend_set_error(xal_status_t status, int64_t vendor_code,
                               const char* vendor_name, const char* message);

// Takes (and clears) the detail a backend left with set_error, if its status
// matches. Returns false when there is none.
bool take_pending(xal_status_t status, int64_t* vendor_code,
                  std::string* vendor_name, std::string* message);
void clear_pending() noexcept;

// Turns the exception in flight into a status with detail.
xal_status_t fail_exception() noexcept;

// entry() with tracing on (XAL_TRACE): records the call and its status.
template <class F>
[[gnu::noinline, gnu::cold]] xal_status_t traced_entry(const char* operation,
                                                      F& body) noexcept {
  trace::Call call(operation);
  xal_status_t status;
  try {
    status = body();
  } catch (...) {
    status = fail_exception();
  }
  call.finish(status);
  return status;
}

// Wraps an entry point: sets the operation name, converts exceptions.
template <class F>
inline xal_status_t entry(const char* operation, F&& body) noexcept {
  t_operation = operation;
  if (trace_on()) [[unlikely]] return traced_entry(operation, body);
  try {
    return body();
  } catch (...) {
    return fail_exception();
  }
}

}  // namespace xal::core
