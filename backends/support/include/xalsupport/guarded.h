// The exception barrier of the backends' table entries: nothing may cross
// the C boundary of the plugin table, so every entry runs its body through
// guarded(entry, operation, body). `entry` is the backend's entry context:
// it words the status of what the barrier caught (Caught) and may hold
// what an entry keeps for its whole call (a device or context to give
// back). ReportedEntry is the context of the backends that report through
// the plugin-wide services (report.h).
#pragma once

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "xal/xal.h"
#include "xalsupport/report.h"

namespace xal::support {

// Thrown by an entry's body to fail with `status`; the barrier hands its
// message to the entry context as the detail.
class StatusError : public std::runtime_error {
 public:
  StatusError(xal_status_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  xal_status_t status() const { return status_; }

 private:
  xal_status_t status_;
};

// What the barrier caught, for the entry context to word.
struct Caught {
  enum class Kind {
    kStatusError,      // a StatusError: its status and message
    kOutOfHostMemory,  // std::bad_alloc: XAL_ERROR_OUT_OF_HOST_MEMORY
    kException,        // another std::exception: XAL_ERROR_INTERNAL
    kUnknown,          // anything else: XAL_ERROR_INTERNAL
  };
  Kind kind;
  xal_status_t status;
  const char* operation;  // the entry's name as the caller gave it (may be null)
  const char* what;       // the exception's message; null for kOutOfHostMemory, kUnknown
};

namespace detail {
// entry.fail(caught), or the bare status if that throws.
template <typename Entry>
xal_status_t notify(const Entry& entry, const Caught& caught) noexcept {
  try {
    return entry.fail(caught);
  } catch (...) {
    return caught.status;
  }
}
}  // namespace detail

// Runs `body` (returning xal_status_t) and returns its status; an exception
// it throws becomes a status (Caught::Kind) that entry.fail(caught) words
// and reports, and whose result is returned (the bare status if fail
// throws). `entry` outlives the call: a context built in the call's
// argument list lasts until the status is returned. Never throws; as
// thread-safe as `body` and `entry`.
template <typename Entry, typename Body>
xal_status_t guarded(const Entry& entry, const char* operation, Body&& body) noexcept {
  try {
    return body();
  } catch (const StatusError& error) {
    return detail::notify(entry, {Caught::Kind::kStatusError, error.status(),
                                  operation, error.what()});
  } catch (const std::bad_alloc&) {
    return detail::notify(entry, {Caught::Kind::kOutOfHostMemory,
                                  XAL_ERROR_OUT_OF_HOST_MEMORY, operation, nullptr});
  } catch (const std::exception& error) {
    return detail::notify(entry, {Caught::Kind::kException, XAL_ERROR_INTERNAL,
                                  operation, error.what()});
  } catch (...) {
    return detail::notify(entry, {Caught::Kind::kUnknown, XAL_ERROR_INTERNAL,
                                  operation, nullptr});
  }
}

// The entry context that reports "<operation>: <cause>" ("out of host
// memory", the exception's message, "unknown exception") through the
// plugin-wide services (report()). Stateless; thread-safe.
struct ReportedEntry {
  xal_status_t fail(const Caught& caught) const {
    const char* cause = caught.kind == Caught::Kind::kOutOfHostMemory ? "out of host memory"
                        : caught.what != nullptr                       ? caught.what
                                                                       : "unknown exception";
    return report(caught.status, 0, nullptr,
                  std::string(caught.operation != nullptr ? caught.operation : "") +
                      ": " + cause);
  }
};

// guarded() with ReportedEntry.
template <typename Body>
xal_status_t guarded(const char* operation, Body&& body) noexcept {
  return guarded(ReportedEntry{}, operation, body);
}

// guarded() with a bare handler: on_error(status, what) words and returns
// the status (`what` null for std::bad_alloc and for an exception that is
// not a std::exception). As thread-safe as `body` and `on_error`.
template <typename Body, typename OnError>
xal_status_t catch_all(Body&& body, OnError&& on_error) noexcept {
  struct Handler {
    OnError& on_error;
    xal_status_t fail(const Caught& caught) const {
      return on_error(caught.status, caught.what);
    }
  };
  return guarded(Handler{on_error}, nullptr, body);
}

}  // namespace xal::support
