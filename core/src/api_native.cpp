// Introspection: a backend's table and instance, a handle's native object.
#include "comm.hpp"
#include "error.hpp"
#include "runtime.hpp"

using namespace xal::core;

extern "C" {

// The table and instance of backend `index`. Thread-safe.
XAL_API xal_status_t xal_backend_get_native(uint32_t index,
                                            const xal_backend_table_t** out_table,
                                            xal_backend_t** out_backend) {
  return entry("xal_backend_get_native", [&] {
    const RuntimeHold hold;  // takes no handle: may race xal_shutdown
    Runtime* rt = hold.get();
    if (!rt) return not_initialized();
    if (!out_table) return null_argument("out_table");
    if (!out_backend) return null_argument("out_backend");
    if (index >= rt->backends.size())
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  cat("backend index ", index, " is past the end (",
                      rt->backends.size(), " backends)"));
    const Backend& b = *rt->backends[index];
    if (!b.loaded())
      return fail(XAL_ERROR_BACKEND_UNAVAILABLE,
                  cat("backend ", b.name, " is not loaded: ", b.reason));
    *out_table = b.table.get();
    *out_backend = b.instance;
    return XAL_SUCCESS;
  });
}

// The backend object behind any live handle. Thread-safe.
XAL_API xal_status_t xal_handle_get_native(const void* handle,
                                           const xal_backend_table_t** out_table,
                                           void** out_native) {
  return entry("xal_handle_get_native", [&] {
    HandleHeader* h = handle_header(handle);
    if (!h) return bad_handle(handle, "handle");
    if (!out_table) return null_argument("out_table");
    if (!out_native) return null_argument("out_native");
    void* native = nullptr;
    switch (static_cast<Kind>(h->kind)) {
      case Kind::kDevice: native = reinterpret_cast<DeviceObj*>(h)->native; break;
      case Kind::kStream: native = reinterpret_cast<StreamObj*>(h)->native; break;
      case Kind::kEvent: native = reinterpret_cast<EventObj*>(h)->native; break;
      case Kind::kModule: native = reinterpret_cast<ModuleObj*>(h)->native; break;
      case Kind::kKernel: native = reinterpret_cast<KernelObj*>(h)->native; break;
      case Kind::kComm: native = reinterpret_cast<CommObj*>(h)->impl->native(); break;
      default: return bad_handle(handle, "handle");
    }
    *out_table = h->table;
    *out_native = native;
    return XAL_SUCCESS;
  });
}

}  // extern "C"
