// Configuration of a vendor backend: the core's services->get_config (the
// environment, or the core's own settings), else the process environment.
#pragma once

#include <string>

#include "xal/xal_backend.h"

namespace xal::support {

// The value of `key`, or null when it is not set. Without services (or a
// services table too old to have get_config, or a null get_config) it is
// std::getenv(key). The text is owned by the core or the environment.
// Thread-safe as far as get_config and getenv are.
const char* config_value(const xal_backend_services_t* services, const char* key);

// config_value() as a string, empty when `key` is not set.
std::string config(const xal_backend_services_t* services, const char* key);

// True when the environment variable `variable` names a library that loads
// and exports `marker` (the tests' simulated vendor library marks itself so).
// The library is left open: a vendor library is never unloaded, and the
// plugin opens it again at init. Thread-safe.
bool named_library_exports(const char* variable, const char* marker);

}  // namespace xal::support
