// OpenCL error codes -> xal status, and error reporting through the core's
// services table. The CL code is kept as the vendor code with its name.
#pragma once

#include "cl_headers.h"
#include "xal/xal_backend.h"

#include <string_view>

namespace xal::opencl {

// "CL_OUT_OF_RESOURCES", ...; "CL_UNKNOWN_ERROR" for a code not in the
// list. Never NULL. Thread-safe.
const char* cl_error_name(cl_int code);

// The xal status for a CL code (CL_SUCCESS -> XAL_SUCCESS; an unknown
// negative code -> XAL_ERROR_BACKEND). Thread-safe.
xal_status_t cl_to_status(cl_int code);

// Records `status` with `code`, its name and "<what>: <name> (<code>)
// [detail]" through services->set_error and returns `status`. `services`
// may be NULL (nothing is recorded). Never throws. Thread-safe.
xal_status_t report_cl(const xal_backend_services_t* services,
                       xal_status_t status, cl_int code, std::string_view what,
                       std::string_view detail = {});

// report_cl with the status that cl_to_status gives.
inline xal_status_t report_cl(const xal_backend_services_t* services,
                              cl_int code, std::string_view what,
                              std::string_view detail = {}) {
  return report_cl(services, cl_to_status(code), code, what, detail);
}

// Records an error that has no CL code. Never throws.
xal_status_t report(const xal_backend_services_t* services, xal_status_t status,
                    std::string_view message);

}  // namespace xal::opencl
