// The plugin table and the one exported symbol.
#include "entries.h"

namespace xal::opencl {
namespace {

xal_backend_table_t make_table() {
  xal_backend_table_t t{};
  t.struct_size = sizeof(xal_backend_table_t);
  t.abi_major = XAL_ABI_VERSION_MAJOR;
  t.abi_minor = XAL_ABI_VERSION_MINOR;
  t.name = "opencl";
  t.version = "1.0.0";
  t.support_note = kSupportNote;
  t.init = backend_init;
  t.shutdown = backend_shutdown;
  t.describe = backend_describe;
  t.device_count = device_count;
  t.device_get = device_get;
  t.device_get_properties = device_get_properties;
  t.device_synchronize = device_synchronize;
  t.mem_alloc = mem_alloc;
  t.mem_free = mem_free;
  t.mem_get_info = mem_get_info;
  t.host_alloc = host_alloc;
  t.host_free = host_free;
  t.stream_create = stream_create;
  t.stream_destroy = stream_destroy;
  t.stream_synchronize = stream_synchronize;
  t.stream_query = stream_query;
  t.stream_enqueue_host_func = stream_enqueue_host_func;
  t.memcpy_htod = memcpy_htod;
  t.memcpy_dtoh = memcpy_dtoh;
  t.memcpy_dtod = memcpy_dtod;
  t.memcpy_peer = memcpy_peer;
  t.memset = memset_bytes;
  t.event_create = event_create;
  t.event_destroy = event_destroy;
  t.event_record = event_record;
  t.stream_wait_event = stream_wait_event;
  t.event_synchronize = event_synchronize;
  t.event_query = event_query;
  t.event_elapsed_ms = event_elapsed_ms;
  t.module_load = module_load;
  t.module_unload = module_unload;
  t.kernel_get = kernel_get;
  t.kernel_launch = kernel_launch;
  t.get_extension = get_extension;
  return t;
}

const xal_backend_table_t kTable = make_table();

}  // namespace
}  // namespace xal::opencl

// The one exported symbol. Thread-safe; the table is static.
extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
  if (XAL_ABI_MAJOR(core_abi_version) != XAL_ABI_VERSION_MAJOR) return nullptr;
  return &xal::opencl::kTable;
}
