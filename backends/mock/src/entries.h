// The mock plugin's table entries (C ABI), one source per concept.
// Every entry runs its body under guarded(Entry{services}, ...) (errors.h):
// no exception crosses the ABI.
// Every entry may be called from any thread (init/shutdown are serialised by
// the core). Ownership: init returns an instance freed by shutdown; streams,
// events and modules are owned by their device until the matching
// destroy/unload (or shutdown); allocations by the device's arena until
// mem_free, device_reset or shutdown; host buffers by the instance until
// host_free or shutdown.
#pragma once

#include "backend.h"
#include "errors.h"
#include "xal/xal_backend.h"
#include "xalsupport/entry_decls.h"

namespace xal::mock {

// The plugin's version: the table's and describe's.
inline constexpr char kVersion[] = "1.1.0";

// Handle casts: the backend's opaque objects are our C++ objects.
inline Backend* as_backend(xal_backend_t* h) { return reinterpret_cast<Backend*>(h); }
inline Device* as_device(xal_bdevice_t* h) { return reinterpret_cast<Device*>(h); }
inline Stream* as_stream(xal_bstream_t* h) { return reinterpret_cast<Stream*>(h); }
inline Event* as_event(xal_bevent_t* h) { return reinterpret_cast<Event*>(h); }
inline Module* as_module(xal_bmodule_t* h) { return reinterpret_cast<Module*>(h); }
inline Kernel* as_kernel(xal_bkernel_t* h) { return reinterpret_cast<Kernel*>(h); }
template <class To, class From>
To* to_handle(From* object) { return reinterpret_cast<To*>(object); }

inline const xal_backend_services_t* services_of(const Device* d) {
  return d ? d->backend().services() : nullptr;
}
inline const xal_backend_services_t* services_of(const Stream* s) {
  return s ? s->device().backend().services() : nullptr;
}
inline const xal_backend_services_t* services_of(const Event* e) {
  return e ? e->device().backend().services() : nullptr;
}

// Throws Error(INVALID_ARGUMENT) when `out` is NULL or older than the
// first public version of its struct.
template <class T>
void check_out_struct(const T* out, const char* what) {
  if (!out) throw Error(XAL_ERROR_INVALID_ARGUMENT, std::string(what) + " is NULL");
  if (out->struct_size < sizeof(T))
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                std::string(what) + "->struct_size is " +
                    std::to_string(out->struct_size) + ", expected at least " +
                    std::to_string(sizeof(T)));
}

inline void check_not_null(const void* p, const char* what) {
  if (!p) throw Error(XAL_ERROR_INVALID_ARGUMENT, std::string(what) + " is NULL");
}

// Returns XAL_ERROR_INVALID_HANDLE (no detail can be recorded without an
// instance) when a handle is NULL.
#define XAL_MOCK_REQUIRE_HANDLE(h) \
  do {                             \
    if (!(h)) return XAL_ERROR_INVALID_HANDLE; \
  } while (0)

// The required entries, declared from the entry list with the table's
// types (xalsupport/entry_decls.h); the optional ones the mock implements
// follow. Each is defined in the file of its concept:
// backend.cpp: init, shutdown, describe, device_count, device_get;
// device.cpp: the other device entries and device_ptr_to_host;
// memory.cpp: device and host memory; copy.cpp: copies and memset;
// stream.cpp: streams; event.cpp: events; module.cpp: modules and kernels;
// comm.cpp: native collectives (comm_engine.h); interop.cpp: ABI 1.1
// imports and IPC.
XAL_SUPPORT_DECLARE_REQUIRED_ENTRIES()
XAL_SUPPORT_DECLARE_ENTRY(describe)
XAL_SUPPORT_DECLARE_DEVICE_STATE_ENTRIES()
XAL_SUPPORT_DECLARE_ENTRY(device_ptr_to_host)
XAL_SUPPORT_DECLARE_HOST_MEMORY_ENTRIES()
XAL_SUPPORT_DECLARE_ENTRY(stream_enqueue_host_func)
XAL_SUPPORT_DECLARE_ENTRY(memcpy_peer)
XAL_SUPPORT_DECLARE_MODULE_ENTRIES()
XAL_SUPPORT_DECLARE_COLLECTIVE_ENTRIES()
XAL_SUPPORT_DECLARE_INTEROP_ENTRIES()

}  // namespace xal::mock
