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
// full: every entry; minimal: fake_table(false); queued: full less
// device_ptr_to_host, with host_alloc/host_free, and streams whose work
// (copies, memsets, host functions, allreduce) waits until the stream or
// its device is synchronised or the stream destroyed; a group's allreduce
// is queued at group_end, as NCCL does.
enum class FakeKind { full, minimal, queued };
void use_fake(FakeKind kind);
// Number of target device resets seen.
int fake_resets();
// Number of target stream_destroy / event_destroy calls that released.
int fake_stream_destroys();
int fake_event_destroys();
// Number of target comm_destroy calls seen.
int fake_comm_destroys();
// The next `n` stream or event destroys fail with XAL_ERROR_BACKEND and
// release nothing.
void fail_next_destroys(int n);
// The native handle of the last stream or event destroy (failed or not).
const void* fake_last_destroyed();
// Number of target stream_synchronize calls seen.
int fake_stream_syncs();
// Host allocations of the queued fake not yet freed.
int fake_host_allocations();
// Number of errors of `status` reported through the services, any thread.
// Thread-safe.
int errors_reported(xal_status_t status);

}  // namespace xal::fault::testing
