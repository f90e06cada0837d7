// The exception barrier of the vendor backends' table entries: nothing may
// cross the C boundary of the plugin table, so every entry runs its body
// through catch_all() (or guarded(), its form with a services report).
#pragma once

#include <exception>
#include <new>
#include <string>

#include "xal/xal.h"
#include "xalsupport/report.h"

namespace xal::support {

namespace detail {
// on_error(status, what), or the bare status if on_error throws.
template <typename OnError>
xal_status_t notify(OnError& on_error, xal_status_t status,
                    const char* what) noexcept {
  try {
    return on_error(status, what);
  } catch (...) {
    return status;
  }
}
}  // namespace detail

// Runs `body` (returning xal_status_t) and turns an exception into a
// status: std::bad_alloc gives XAL_ERROR_OUT_OF_HOST_MEMORY, anything else
// XAL_ERROR_INTERNAL. The status is handed to on_error(status, what), with
// `what` the exception's message (null for std::bad_alloc and for an
// exception that is not a std::exception), and on_error's result is
// returned; if on_error itself throws, the bare status is. Never throws;
// as thread-safe as `body` and `on_error`.
template <typename Body, typename OnError>
xal_status_t catch_all(Body&& body, OnError&& on_error) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return detail::notify(on_error, XAL_ERROR_OUT_OF_HOST_MEMORY, nullptr);
  } catch (const std::exception& error) {
    return detail::notify(on_error, XAL_ERROR_INTERNAL, error.what());
  } catch (...) {
    return detail::notify(on_error, XAL_ERROR_INTERNAL, nullptr);
  }
}

// catch_all() that reports "<operation>: <what>" (or "out of host memory",
// "unknown exception") through the plugin's services (report()).
template <typename Body>
xal_status_t guarded(const char* operation, Body&& body) noexcept {
  return catch_all(body, [operation](xal_status_t status, const char* what) {
    const char* detail = status == XAL_ERROR_OUT_OF_HOST_MEMORY ? "out of host memory"
                         : what != nullptr                       ? what
                                                                 : "unknown exception";
    return report(status, 0, nullptr, std::string(operation) + ": " + detail);
  });
}

}  // namespace xal::support
