#include "ops.hpp"

#include <fnmatch.h>

#include <array>
#include <string>

namespace xal::fault {
namespace {

constexpr std::array<std::string_view, kOpCount> kNames = {
    "device_get_properties", "device_synchronize", "device_get_metrics",
    "mem_alloc", "mem_free", "mem_get_info", "host_alloc", "host_free",
    "host_register", "host_unregister", "stream_create", "stream_destroy",
    "stream_synchronize", "stream_query", "stream_enqueue_host_func",
    "memcpy_htod", "memcpy_dtoh", "memcpy_dtod", "memcpy_peer", "memset",
    "event_create", "event_destroy", "event_record", "stream_wait_event",
    "event_synchronize", "event_query", "event_elapsed_ms", "module_load",
    "module_unload", "kernel_get", "kernel_launch", "comm_create",
    "comm_destroy", "comm_abort", "comm_get_async_error", "group_start",
    "group_end", "allreduce", "broadcast", "reduce", "allgather",
    "reduce_scatter", "alltoall"};

}  // namespace

std::string_view op_name(Op op) {
  const auto i = static_cast<size_t>(op);
  return i < kOpCount ? kNames[i] : std::string_view("unknown");
}

std::optional<Op> op_from_name(std::string_view name) {
  for (size_t i = 0; i < kOpCount; ++i) {
    if (kNames[i] == name) return static_cast<Op>(i);
  }
  return std::nullopt;
}

bool op_has_output(Op op) {
  switch (op) {
    case Op::memcpy_htod: case Op::memcpy_dtoh: case Op::memcpy_dtod:
    case Op::memcpy_peer: case Op::memset: case Op::allreduce:
    case Op::broadcast: case Op::reduce: case Op::allgather:
    case Op::reduce_scatter: case Op::alltoall:
      return true;
    default:
      return false;
  }
}

bool op_has_size(Op op) {
  return op_has_output(op) || op == Op::mem_alloc || op == Op::host_alloc ||
         op == Op::host_register || op == Op::module_load;
}

bool op_is_sync(Op op) {
  return op == Op::device_synchronize || op == Op::stream_synchronize ||
         op == Op::event_synchronize || op == Op::stream_query ||
         op == Op::event_query;
}

bool op_passes_sticky(Op op) {
  return op == Op::mem_free || op == Op::host_free ||
         op == Op::host_unregister || op == Op::stream_destroy ||
         op == Op::event_destroy || op == Op::module_unload ||
         op == Op::comm_destroy || op == Op::comm_abort ||
         op == Op::device_get_properties || op == Op::device_get_metrics;
}

bool op_matches(std::string_view glob, Op op) {
  const std::string pattern(glob);
  const std::string name(op_name(op));
  return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

}  // namespace xal::fault
