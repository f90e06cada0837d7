// Level Zero results -> xal status codes. The ze_result_t is kept as the
// vendor code and its enumerator name as the vendor name.
#pragma once

#include <cstdint>

#include "xal/xal.h"

namespace xal::levelzero {

struct StatusMapping {
  xal_status_t status;  // XAL_SUCCESS only for ZE_RESULT_SUCCESS
  const char* name;     // "ZE_RESULT_ERROR_DEVICE_LOST"; "ZE_RESULT_UNRECOGNIZED"
  bool sticky;          // the context is lost until reset
};

// Total function: an unknown code gives XAL_ERROR_BACKEND. Thread-safe.
StatusMapping map_status(int64_t ze_result);

}  // namespace xal::levelzero
