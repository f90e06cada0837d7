// HIP error codes -> xal status codes. The HIP code is kept as the vendor
// code, its enumerator name as the vendor name.
#pragma once

#include <cstdint>

#include "hip_api.h"
#include "xal/xal.h"
#include "xalsupport/status_table.h"

namespace xal::hip {

// {status, vendor name, sticky}: the row type shared by the vendor
// backends (backends/support, xalsupport/status_table.h).
using support::StatusMapping;

// Total function: any code, known or not, maps to something (an unknown
// code gives XAL_ERROR_BACKEND, non-sticky). Thread-safe.
StatusMapping map_status(int64_t hip_code);

}  // namespace xal::hip
