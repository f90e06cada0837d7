// The transports' C entries (xal_transport.h) as try-blocks: an exception
// becomes a status (OUT_OF_HOST_MEMORY for std::bad_alloc, INTERNAL
// otherwise) with its text in the entry's message. Internal.
#pragma once

#include <cstdio>
#include <exception>
#include <new>

#include "xal/xal.h"

namespace xal::torch_backend {

// Runs body() (returning xal_status_t); thread-safe as body is.
template <class Body>
xal_status_t guarded_entry(const char* what, char* message, size_t message_size, Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    if (message && message_size)
      std::snprintf(message, message_size, "%s: out of host memory", what);
    return XAL_ERROR_OUT_OF_HOST_MEMORY;
  } catch (const std::exception& e) {
    if (message && message_size) std::snprintf(message, message_size, "%s: %s", what, e.what());
    return XAL_ERROR_INTERNAL;
  } catch (...) {
    if (message && message_size)
      std::snprintf(message, message_size, "%s: unknown exception", what);
    return XAL_ERROR_INTERNAL;
  }
}

}  // namespace xal::torch_backend
