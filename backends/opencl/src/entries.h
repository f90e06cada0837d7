// The backend's table entries (xal_backend.h), grouped by the file that
// implements them. Each wraps its body in guarded() and reports errors
// through the instance's services.
#pragma once

#include "xal/xal_backend.h"

namespace xal::opencl {

// What this backend has been run on: the table's support_note (shown when
// init fails) and the start of describe's note.
inline constexpr char support_note[] =
    "verified on PoCL (CPU) only, not yet on a GPU driver";

// backend.cpp: lifecycle and devices
xal_status_t init(const xal_backend_init_args_t* args, xal_backend_t** out_backend);
xal_status_t shutdown(xal_backend_t* backend);
xal_status_t describe(xal_backend_t* backend, xal_backend_describe_t* out);
xal_status_t device_count(xal_backend_t* backend, uint32_t* out_count);
xal_status_t device_get(xal_backend_t* backend, uint32_t index, xal_bdevice_t** out);
xal_status_t device_get_properties(xal_bdevice_t* device, xal_device_properties_t* out);

// memory.cpp: memory
xal_status_t mem_alloc(xal_bdevice_t* device, size_t bytes, xal_devptr_t* out_ptr);
xal_status_t mem_free(xal_bdevice_t* device, xal_devptr_t ptr);
xal_status_t mem_get_info(xal_bdevice_t* device, uint64_t* out_free, uint64_t* out_total);
xal_status_t host_alloc(xal_backend_t* backend, size_t bytes, uint32_t flags, void** out_ptr);
xal_status_t host_free(xal_backend_t* backend, void* ptr);

// copy.cpp: copies and fill
xal_status_t memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst, const void* src, size_t bytes);
xal_status_t memcpy_dtoh(xal_bstream_t* stream, void* dst, xal_devptr_t src, size_t bytes);
xal_status_t memcpy_dtod(xal_bstream_t* stream, xal_devptr_t dst, xal_devptr_t src, size_t bytes);
xal_status_t memcpy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device, xal_devptr_t dst,
                         xal_bdevice_t* src_device, xal_devptr_t src, size_t bytes);
xal_status_t memset(xal_bstream_t* stream, xal_devptr_t dst, uint8_t value, size_t bytes);

// stream.cpp: streams and host functions
xal_status_t device_synchronize(xal_bdevice_t* device);
xal_status_t stream_create(xal_bdevice_t* device, uint32_t flags, xal_bstream_t** out);
xal_status_t stream_destroy(xal_bstream_t* stream);
xal_status_t stream_synchronize(xal_bstream_t* stream);
xal_status_t stream_query(xal_bstream_t* stream);
xal_status_t stream_enqueue_host_func(xal_bstream_t* stream, void (*fn)(void*), void* user);

// event.cpp: events
xal_status_t event_create(xal_bdevice_t* device, uint32_t flags, xal_bevent_t** out);
xal_status_t event_destroy(xal_bevent_t* event);
xal_status_t event_record(xal_bevent_t* event, xal_bstream_t* stream);
xal_status_t stream_wait_event(xal_bstream_t* stream, xal_bevent_t* event);
xal_status_t event_synchronize(xal_bevent_t* event);
xal_status_t event_query(xal_bevent_t* event);
xal_status_t event_elapsed_ms(xal_bevent_t* start, xal_bevent_t* end, float* out_ms);

// module.cpp: modules and kernels
xal_status_t module_load(xal_bdevice_t* device, uint32_t format, const void* image,
                         size_t bytes, xal_bmodule_t** out);
xal_status_t module_unload(xal_bmodule_t* module);
xal_status_t kernel_get(xal_bmodule_t* module, const char* name, xal_bkernel_t** out);
xal_status_t kernel_launch(xal_bstream_t* stream, xal_bkernel_t* kernel,
                           const xal_launch_config_t* config, void** args, size_t arg_count);

// builtin_kernels.cpp: the "xal_opencl_reduce_v1" extension, and the others
const void* get_extension(xal_backend_t* backend, const char* name);

// interop.cpp (ABI 1.1): imported buffers and queues, and the
// "xal_opencl_native_v1" extension. OpenCL has no IPC: those entries stay
// NULL (NOT_SUPPORTED).
xal_status_t mem_import(xal_bdevice_t* device, uint64_t native, size_t bytes, uint32_t flags,
                        xal_devptr_t* out_ptr);
xal_status_t mem_import_release(xal_bdevice_t* device, xal_devptr_t ptr);
xal_status_t stream_import(xal_bdevice_t* device, uint64_t native, uint32_t flags,
                           xal_bstream_t** out_stream);
const void* native_extension();

}  // namespace xal::opencl
