// Error detail from a vendor backend to the core, through the services
// table the core hands to the backend's init (xal_backend.h).
#pragma once

#include <cstdint>
#include <string>

#include "xal/xal_backend.h"

namespace xal::support {

// Records detail through services->set_error when `services` and its
// set_error are not null, and returns `status`. `vendor_name` may be null;
// `message` is copied by the core. Thread-safe.
xal_status_t report(const xal_backend_services_t* services, xal_status_t status,
                    int64_t vendor_code, const char* vendor_name,
                    const char* message);

// The services table of the running core, for the whole plugin: each
// plugin links its own copy of this library and exports none of it. The
// table is not owned; it must outlive the plugin's use (the core keeps it
// for the process). Thread-safe.
void set_services(const xal_backend_services_t* services);
const xal_backend_services_t* services();

// report() through the services of set_services(). Thread-safe.
xal_status_t report(xal_status_t status, int64_t vendor_code,
                    const char* vendor_name, const std::string& message);

}  // namespace xal::support
