// A tiny synchronous host-memory backend and a services table, so that the
// fault plugin can be tested through its table without the core.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "xal/xal_backend.h"

namespace xal::fault::testing {

struct LastError {
  xal_status_t status = XAL_SUCCESS;
  int64_t vendor_code = 0;
  std::string vendor_name;
  std::string message;
};

// The error detail the plugin last reported on this thread.
LastError& last_error();
// Configuration the services' get_config returns (instead of the env).
std::map<std::string, std::string>& config();
// Services whose load_backend knows the fake target "fake" (any other name
// fails with BACKEND_UNAVAILABLE).
const xal_backend_services_t* services();
// The fake target's table; `with_optional` false leaves every optional
// entry NULL (device_ptr_to_host, host funcs, peer copies, reset, ...).
const xal_backend_table_t* fake_table(bool with_optional = true);
// Selects which fake table load_backend("fake") returns.
void use_minimal_fake(bool minimal);
// Number of target device resets seen.
int fake_resets();
// Number of target stream_destroy calls seen.
int fake_stream_destroys();
// Number of errors of `status` reported through the services, any thread.
// Thread-safe.
int errors_reported(xal_status_t status);

}  // namespace xal::fault::testing
