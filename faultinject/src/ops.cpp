#include "ops.hpp"

#include <fnmatch.h>

#include <array>
#include <string>

namespace xal::fault {
namespace {

constexpr std::array<std::string_view, kOpCount> kNames = {
#define XAL_FAULT_OP_NAME(name, presence, minor) #name,
    XAL_BACKEND_ENTRIES(XAL_FAULT_OP_NAME)
#undef XAL_FAULT_OP_NAME
};

}  // namespace

std::string_view op_name(Op op) {
  const auto i = static_cast<size_t>(op);
  return i < kOpCount ? kNames[i] : std::string_view("unknown");
}

bool op_injectable(Op op) {
  switch (op) {
    case Op::init: case Op::shutdown: case Op::describe:
    case Op::device_count: case Op::device_get: case Op::device_reset:
    case Op::device_get_health: case Op::device_ptr_to_host:
    case Op::get_extension: case Op::support_note: case Op::count_:
      return false;
    default:
      return true;
  }
}

std::optional<Op> op_from_name(std::string_view name) {
  for (size_t i = 0; i < kOpCount; ++i) {
    if (kNames[i] == name && op_injectable(static_cast<Op>(i)))
      return static_cast<Op>(i);
  }
  return std::nullopt;
}

bool op_has_output(Op op) {
  switch (op) {
    case Op::memcpy_htod: case Op::memcpy_dtoh: case Op::memcpy_dtod:
    case Op::memcpy_peer: case Op::memset: case Op::allreduce:
    case Op::broadcast: case Op::reduce: case Op::allgather:
    case Op::reduce_scatter: case Op::alltoall: case Op::comm_recv:
      return true;
    default:
      return false;
  }
}

bool op_has_size(Op op) {
  return op_has_output(op) || op == Op::mem_alloc || op == Op::host_alloc ||
         op == Op::host_register || op == Op::module_load ||
         op == Op::mem_import || op == Op::mem_ipc_get || op == Op::mem_ipc_open;
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
         op == Op::mem_import_release || op == Op::mem_ipc_close ||
         op == Op::device_get_properties || op == Op::device_get_metrics;
}

bool op_matches(std::string_view glob, Op op) {
  if (!op_injectable(op)) return false;
  const std::string pattern(glob);
  const std::string name(op_name(op));
  return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

}  // namespace xal::fault
