// The mock plugin's table entries (C ABI), split over plugin_*.cpp by area.
// Every entry runs its body under guarded(): no exception crosses the ABI.
// Every entry may be called from any thread (init/shutdown are serialised by
// the core). Ownership: init returns an instance freed by shutdown; streams,
// events and modules are owned by their device until the matching
// destroy/unload (or shutdown); allocations by the device's arena until
// mem_free, device_reset or shutdown; host buffers by the instance until
// host_free or shutdown.
#pragma once

#include "backend.hpp"
#include "error.hpp"
#include "xal/xal_backend.h"

namespace xal::mock {

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

// plugin.cpp: lifecycle and devices
xal_status_t init(const xal_backend_init_args_t* args, xal_backend_t** out);
xal_status_t shutdown(xal_backend_t* backend);
xal_status_t describe(xal_backend_t* backend, xal_backend_describe_t* out);
xal_status_t device_count(xal_backend_t* backend, uint32_t* out);
xal_status_t device_get(xal_backend_t* backend, uint32_t index, xal_bdevice_t** out);
xal_status_t device_get_properties(xal_bdevice_t* device, xal_device_properties_t* out);
xal_status_t device_synchronize(xal_bdevice_t* device);
xal_status_t device_reset(xal_bdevice_t* device);
xal_status_t device_get_health(xal_bdevice_t* device, xal_device_health_t* out);
xal_status_t device_get_metrics(xal_bdevice_t* device, xal_device_metrics_t* out);
void* device_ptr_to_host(xal_bdevice_t* device, xal_devptr_t ptr, size_t bytes);

// plugin_memory.cpp: memory, host memory and copies
xal_status_t mem_alloc(xal_bdevice_t* device, size_t bytes, xal_devptr_t* out);
xal_status_t mem_free(xal_bdevice_t* device, xal_devptr_t ptr);
xal_status_t mem_get_info(xal_bdevice_t* device, uint64_t* out_free, uint64_t* out_total);
xal_status_t host_alloc(xal_backend_t* backend, size_t bytes, uint32_t flags, void** out);
xal_status_t host_free(xal_backend_t* backend, void* ptr);
xal_status_t host_register(xal_backend_t* backend, void* ptr, size_t bytes);
xal_status_t host_unregister(xal_backend_t* backend, void* ptr);
xal_status_t memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst, const void* src, size_t bytes);
xal_status_t memcpy_dtoh(xal_bstream_t* stream, void* dst, xal_devptr_t src, size_t bytes);
xal_status_t memcpy_dtod(xal_bstream_t* stream, xal_devptr_t dst, xal_devptr_t src, size_t bytes);
xal_status_t memcpy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device, xal_devptr_t dst,
                         xal_bdevice_t* src_device, xal_devptr_t src, size_t bytes);
xal_status_t memset(xal_bstream_t* stream, xal_devptr_t dst, uint8_t value, size_t bytes);

// plugin_stream.cpp: streams, events, modules and kernels
xal_status_t stream_create(xal_bdevice_t* device, uint32_t flags, xal_bstream_t** out);
xal_status_t stream_destroy(xal_bstream_t* stream);
xal_status_t stream_synchronize(xal_bstream_t* stream);
xal_status_t stream_query(xal_bstream_t* stream);
xal_status_t stream_enqueue_host_func(xal_bstream_t* stream, void (*fn)(void*), void* user);
xal_status_t event_create(xal_bdevice_t* device, uint32_t flags, xal_bevent_t** out);
xal_status_t event_destroy(xal_bevent_t* event);
xal_status_t event_record(xal_bevent_t* event, xal_bstream_t* stream);
xal_status_t stream_wait_event(xal_bstream_t* stream, xal_bevent_t* event);
xal_status_t event_synchronize(xal_bevent_t* event);
xal_status_t event_query(xal_bevent_t* event);
xal_status_t event_elapsed_ms(xal_bevent_t* start, xal_bevent_t* end, float* out_ms);
xal_status_t module_load(xal_bdevice_t* device, uint32_t format, const void* image,
                         size_t bytes, xal_bmodule_t** out);
xal_status_t module_unload(xal_bmodule_t* module);
xal_status_t kernel_get(xal_bmodule_t* module, const char* name, xal_bkernel_t** out);
xal_status_t kernel_launch(xal_bstream_t* stream, xal_bkernel_t* kernel,
                           const xal_launch_config_t* config, void** args, size_t arg_count);

// plugin_comm.cpp: native collectives (collectives.hpp)
xal_status_t comm_create(xal_bdevice_t* const* devices, uint32_t n,
                         const xal_bcomm_options_t* options, xal_bcomm_t** out);
xal_status_t comm_destroy(xal_bcomm_t* comm);
xal_status_t comm_abort(xal_bcomm_t* comm);
xal_status_t comm_get_async_error(xal_bcomm_t* comm, xal_status_t* out);
xal_status_t group_start(xal_backend_t* backend);
xal_status_t group_end(xal_backend_t* backend);
xal_status_t allreduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                       xal_dtype_t dtype, xal_op_t op, xal_bstream_t* stream);
xal_status_t broadcast(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                       xal_dtype_t dtype, uint32_t root, xal_bstream_t* stream);
xal_status_t reduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                    xal_dtype_t dtype, xal_op_t op, uint32_t root, xal_bstream_t* stream);
xal_status_t allgather(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                       size_t send_count, xal_dtype_t dtype, xal_bstream_t* stream);
xal_status_t reduce_scatter(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t recv_count, xal_dtype_t dtype, xal_op_t op,
                            xal_bstream_t* stream);
xal_status_t alltoall(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                      xal_dtype_t dtype, xal_bstream_t* stream);

// ABI 1.1 interop (plugin_interop.cpp).
xal_status_t mem_import(xal_bdevice_t* device, uint64_t native, size_t bytes, uint32_t flags,
                        xal_devptr_t* out_ptr);
xal_status_t mem_import_release(xal_bdevice_t* device, xal_devptr_t ptr);
xal_status_t stream_import(xal_bdevice_t* device, uint64_t native, uint32_t flags,
                           xal_bstream_t** out_stream);
xal_status_t mem_ipc_get(xal_bdevice_t* device, xal_devptr_t ptr, size_t bytes,
                         uint8_t* out_vendor);
xal_status_t mem_ipc_open(xal_bdevice_t* device, const uint8_t* vendor, size_t bytes,
                          int32_t owner_pid, xal_devptr_t* out_ptr);
xal_status_t mem_ipc_close(xal_bdevice_t* device, xal_devptr_t ptr);

}  // namespace xal::mock
