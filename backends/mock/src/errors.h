// Errors inside the mock backend: the typed exception carrying an xal
// status, error detail through the core's services, and the entry context
// of the shared exception barrier (xalsupport/guarded.h) with the mock's
// wording.
#pragma once

#include <cstdint>
#include <string>

#include "xal/xal_backend.h"
#include "xalsupport/guarded.h"

namespace xal::mock {

// Thrown by the implementation with a status and its message; the entry
// barrier reports it as it is.
using Error = support::StatusError;

// "0x7f12ab000000": a device address for messages.
std::string hex(uint64_t value);

// Records `message` as the calling thread's error through `services` (may be
// NULL) and returns `status`.
xal_status_t report(const xal_backend_services_t* services,
                    xal_status_t status, const std::string& message);

// The mock's entry context for support::guarded(): an Error gives its
// status and message, std::bad_alloc "<op>: out of host memory", another
// exception "<op>: internal error: <what>", anything else "<op>: unknown
// internal error", reported through `services` (may be NULL; not owned).
// Thread-safe.
struct Entry {
  const xal_backend_services_t* services;
  xal_status_t fail(const support::Caught& caught) const;
};

using support::guarded;

}  // namespace xal::mock
