// HIP error codes -> xal status codes. The HIP code is kept as the vendor
// code, its enumerator name as the vendor name.
#pragma once

#include <cstdint>

#include "hip_api.h"
#include "xal/xal.h"

namespace xal::hip {

struct StatusMapping {
  xal_status_t status;  // XAL_SUCCESS only for hipSuccess
  const char* name;     // "hipErrorIllegalAddress"; "hipErrorUnrecognized"
  bool sticky;          // the device keeps failing until hipDeviceReset
};

// Total function: any code, known or not, maps to something (an unknown
// code gives XAL_ERROR_BACKEND, non-sticky). Thread-safe.
StatusMapping map_status(int64_t hip_code);

}  // namespace xal::hip
