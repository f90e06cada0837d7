// Per-call tracing of one backend's plugin table, for backend authors
// (XAL_TRACE_ENTRIES=<backend>, which `xal-conform --backend-dev` sets):
// every entry of XAL_BACKEND_ENTRIES the backend implements is called
// through a wrapper that writes one line to stderr per call,
//   xal-trace: mock.memcpy_htod(0x7f.., 0x55.., 0x55.., 4096) -> XAL_SUCCESS
// with the entry's arguments as passed and what it returned. Entries the
// backend leaves NULL stay NULL, so the core's fallbacks and capability
// bits are those of the backend itself.
#pragma once

#include <string>

#include "xal/xal_backend.h"

namespace xal::core {

// Whether XAL_TRACE_ENTRIES names the backend `short_name` ("*" names any).
bool table_trace_wanted(const std::string& short_name);

// A table that calls `target`'s entries through the tracing wrappers,
// labelled `short_name`. One backend per process is traced: a second
// request keeps its own table (and says so on stderr).
xal_backend_table_t table_trace_wrap(const xal_backend_table_t& target,
                                     const std::string& short_name);

}  // namespace xal::core
