// The HIP backend's plugin table and its one exported symbol.
#include <cstdlib>
#include <string>

#include "dynamic_symbols.h"
#include "entries.h"
#include "rccl.h"
#include "xalsupport/config.h"

namespace xal::hip {
namespace {

constexpr xal_backend_table_t make_table(bool with_collectives) {
  xal_backend_table_t t{};
  t.struct_size = sizeof(xal_backend_table_t);
  t.abi_major = XAL_ABI_VERSION_MAJOR;
  t.abi_minor = XAL_ABI_VERSION_MINOR;
  t.name = "hip";
  t.version = "1.0.0";
  t.support_note = kSupportNote;
  t.init = backend_init;
  t.shutdown = backend_shutdown;
  t.describe = backend_describe;
  t.device_count = device_count;
  t.device_get = device_get;
  t.device_get_properties = device_get_properties;
  t.device_synchronize = device_synchronize;
  t.device_reset = device_reset;
  t.device_get_health = device_get_health;
  t.device_get_metrics = device_get_metrics;
  t.mem_alloc = mem_alloc;
  t.mem_free = mem_free;
  t.mem_get_info = mem_get_info;
  t.host_alloc = host_alloc;
  t.host_free = host_free;
  t.host_register = host_register;
  t.host_unregister = host_unregister;
  t.stream_create = stream_create;
  t.stream_destroy = stream_destroy;
  t.stream_synchronize = stream_synchronize;
  t.stream_query = stream_query;
  t.stream_enqueue_host_func = stream_enqueue_host_func;
  t.memcpy_htod = memcpy_htod;
  t.memcpy_dtoh = memcpy_dtoh;
  t.memcpy_dtod = memcpy_dtod;
  t.memcpy_peer = memcpy_peer;
  t.memset = memset_d8;
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
  if (with_collectives) {
    t.comm_create = comm_create;
    t.comm_destroy = comm_destroy;
    t.comm_abort = comm_abort;
    t.comm_get_async_error = comm_get_async_error;
    t.group_start = group_start;
    t.group_end = group_end;
    t.allreduce = allreduce;
    t.broadcast = broadcast;
    t.reduce = reduce;
    t.allgather = allgather;
    t.reduce_scatter = reduce_scatter;
    t.alltoall = alltoall;
  }
  return t;
}

constexpr xal_backend_table_t kTableWithRccl = make_table(true);
constexpr xal_backend_table_t kTableWithoutRccl = make_table(false);

// True when XAL_HIP_LIBRARY names the tests' simulated runtime (the default
// sonames are the real one, which is not loaded here: init does that). The
// library is left open, as init opens it again.
bool simulated_runtime_requested() {
  return support::named_library_exports("XAL_HIP_LIBRARY", HipLibrary::kSimulatedMarker);
}

// Whether RCCL can serve the runtime init will load, by the same checks as
// init's (Rccl::load): without it the collective entries stay NULL so that
// the core runs its own collectives on HIP devices. An RCCL that opens but
// is incomplete, or that cannot serve this runtime, must not give the table
// with native collectives.
bool rccl_present() {
  const char* path = std::getenv("XAL_RCCL_LIBRARY");
  Rccl rccl;
  std::string reason;
  return rccl.load(path != nullptr ? path : "", simulated_runtime_requested(), &reason);
}

}  // namespace
}  // namespace xal::hip

// Returns the table for a core of ABI `core_abi_version`, or NULL when the
// major differs. Static storage; thread-safe.
extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
  if (XAL_ABI_MAJOR(core_abi_version) != XAL_ABI_VERSION_MAJOR) return nullptr;
  static const bool with_rccl = xal::hip::rccl_present();
  return with_rccl ? &xal::hip::kTableWithRccl : &xal::hip::kTableWithoutRccl;
}
