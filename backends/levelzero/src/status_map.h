// Level Zero results -> xal status codes. The ze_result_t is kept as the
// vendor code and its enumerator name as the vendor name.
#pragma once

#include <cstdint>

#include "xal/xal.h"
#include "xalsupport/status_table.h"

namespace xal::levelzero {

// {status, vendor name, sticky}: the row type shared by the vendor
// backends (backends/support, xalsupport/status_table.h).
using support::StatusMapping;

// Total function: an unknown code gives XAL_ERROR_BACKEND. Thread-safe.
StatusMapping map_status(int64_t ze_result);

}  // namespace xal::levelzero
