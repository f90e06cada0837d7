// Vendor result codes -> xal status codes: the table lookup the vendor
// backends share. Each backend keeps its own table (its codes, which of
// them are sticky); see backends/<vendor>/src/status_map.cpp.
#pragma once

#include <cstdint>
#include <span>

#include "xal/xal.h"

namespace xal::support {

struct StatusMapping {
  xal_status_t status;  // XAL_SUCCESS only for the vendor's success code
  const char* name;     // the vendor enumerator: "hipErrorIllegalAddress"
  bool sticky;          // the device keeps failing until it is reset
};

// One row of a backend's table: a vendor code and what it maps to.
struct StatusEntry {
  int64_t code;
  StatusMapping mapping;
};

// The mapping of `code` in `table`; a code not in it gives
// {XAL_ERROR_BACKEND, unknown_name, not sticky}. Total, pure, thread-safe.
StatusMapping find_status(std::span<const StatusEntry> table, int64_t code,
                          const char* unknown_name);

}  // namespace xal::support
