// Failures of work the core itself runs inside a backend's stream (the
// host steps of the hierarchical path, run as host functions), which the
// backend's stream cannot carry: kept per native stream and returned by
// that stream's next xal_stream_synchronize or completed xal_stream_query,
// as a failed collective of a native library is.
#pragma once

#include <string>

#include "xal/xal_backend.h"

namespace xal::core {

// Notes that work on `stream` failed with `status`; only the first failure
// is kept until taken. Thread-safe; never throws.
void note_stream_failure(const xal_bstream_t* stream, xal_status_t status,
                         const std::string& message) noexcept;

// The failure noted for `stream` (removed), or XAL_SUCCESS. Costs one
// atomic load while no stream has a failure. Thread-safe.
xal_status_t take_stream_failure(const xal_bstream_t* stream, std::string* out_message);

// Drops what was noted for `stream` (it is being destroyed). Thread-safe.
void forget_stream_failure(const xal_bstream_t* stream) noexcept;

}  // namespace xal::core
