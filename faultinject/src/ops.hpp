// The operations the fault backend can inject into: the names of the
// plugin-table entries (xal_backend.h) it wraps.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace xal::fault {

enum class Op : uint8_t {
  device_get_properties,
  device_synchronize,
  device_get_metrics,
  mem_alloc,
  mem_free,
  mem_get_info,
  host_alloc,
  host_free,
  host_register,
  host_unregister,
  stream_create,
  stream_destroy,
  stream_synchronize,
  stream_query,
  stream_enqueue_host_func,
  memcpy_htod,
  memcpy_dtoh,
  memcpy_dtod,
  memcpy_peer,
  memset,
  event_create,
  event_destroy,
  event_record,
  stream_wait_event,
  event_synchronize,
  event_query,
  event_elapsed_ms,
  module_load,
  module_unload,
  kernel_get,
  kernel_launch,
  comm_create,
  comm_destroy,
  comm_abort,
  comm_get_async_error,
  group_start,
  group_end,
  allreduce,
  broadcast,
  reduce,
  allgather,
  reduce_scatter,
  alltoall,
  count_  // number of operations
};

inline constexpr size_t kOpCount = static_cast<size_t>(Op::count_);

// The table entry name of `op` ("mem_alloc").
std::string_view op_name(Op op);
// The operation named `name`, or nullopt.
std::optional<Op> op_from_name(std::string_view name);
// True when the operation writes a buffer that bitflip can corrupt.
bool op_has_output(Op op);
// True when the operation carries a byte size (min_bytes / max_bytes).
bool op_has_size(Op op);
// True for the synchronisation points where async errors surface.
bool op_is_sync(Op op);
// True for operations that still work on a device in a sticky error state:
// those that release resources (so that cleanup works) and the queries of
// properties and metrics.
bool op_passes_sticky(Op op);
// fnmatch(3) of `glob` against the operation's name.
bool op_matches(std::string_view glob, Op op);

}  // namespace xal::fault
