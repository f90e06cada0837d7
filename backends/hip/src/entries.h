// The HIP backend's plugin-table entries (C linkage not needed: the table
// holds plain function pointers). Each wraps its body in guarded().
// Ownership and threading follow xal_backend.h for the matching entry.
#pragma once

#include "xal/xal_backend.h"
#include "xalsupport/table.h"

namespace xal::hip {

// The required entries (init, shutdown, devices, memory, streams, copies,
// memset, events), declared from the entry list with the table's types;
// each is defined in the file of its concept (backend.cpp, device.cpp,
// memory.cpp, stream.cpp, copy.cpp, event.cpp). The optional ones follow.
XAL_SUPPORT_DECLARE_REQUIRED_ENTRIES()

// What this backend has been run on: the table's support_note (shown when
// init fails) and the start of describe's note.
inline constexpr char support_note[] =
    "verified on a simulated runtime only, not yet on AMD hardware";

// backend.cpp
xal_status_t describe(xal_backend_t* backend, xal_backend_describe_t* out);

// device.cpp, device_state.cpp (synchronize, reset, health, metrics)
xal_status_t device_reset(xal_bdevice_t* device);
xal_status_t device_get_health(xal_bdevice_t* device, xal_device_health_t* out);
xal_status_t device_get_metrics(xal_bdevice_t* device,
                                xal_device_metrics_t* out);

// memory.cpp
xal_status_t host_alloc(xal_backend_t* backend, size_t bytes, uint32_t flags,
                        void** out_ptr);
xal_status_t host_free(xal_backend_t* backend, void* ptr);
xal_status_t host_register(xal_backend_t* backend, void* ptr, size_t bytes);
xal_status_t host_unregister(xal_backend_t* backend, void* ptr);

// stream.cpp
xal_status_t stream_enqueue_host_func(xal_bstream_t* stream,
                                      void (*fn)(void* user), void* user);

// copy.cpp
xal_status_t memcpy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device,
                         xal_devptr_t dst, xal_bdevice_t* src_device,
                         xal_devptr_t src, size_t bytes);

// module.cpp
xal_status_t module_load(xal_bdevice_t* device, uint32_t format,
                         const void* image, size_t bytes,
                         xal_bmodule_t** out_module);
xal_status_t module_unload(xal_bmodule_t* module);
xal_status_t kernel_get(xal_bmodule_t* module, const char* name,
                        xal_bkernel_t** out_kernel);
xal_status_t kernel_launch(xal_bstream_t* stream, xal_bkernel_t* kernel,
                           const xal_launch_config_t* config, void** args,
                           size_t arg_count);

// comm.cpp (RCCL)
xal_status_t comm_create(xal_bdevice_t* const* devices, uint32_t n,
                         const xal_bcomm_options_t* options,
                         xal_bcomm_t** out_comms);
xal_status_t comm_destroy(xal_bcomm_t* comm);
xal_status_t comm_abort(xal_bcomm_t* comm);
xal_status_t comm_get_async_error(xal_bcomm_t* comm, xal_status_t* out_error);
xal_status_t group_start(xal_backend_t* backend);
xal_status_t group_end(xal_backend_t* backend);
xal_status_t allreduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                       size_t count, xal_dtype_t dtype, xal_op_t op,
                       xal_bstream_t* stream);
xal_status_t broadcast(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                       size_t count, xal_dtype_t dtype, uint32_t root,
                       xal_bstream_t* stream);
xal_status_t reduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                    size_t count, xal_dtype_t dtype, xal_op_t op, uint32_t root,
                    xal_bstream_t* stream);
xal_status_t allgather(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                       size_t send_count, xal_dtype_t dtype,
                       xal_bstream_t* stream);
xal_status_t reduce_scatter(xal_bcomm_t* comm, xal_devptr_t send,
                            xal_devptr_t recv, size_t recv_count,
                            xal_dtype_t dtype, xal_op_t op,
                            xal_bstream_t* stream);
xal_status_t alltoall(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                      size_t count, xal_dtype_t dtype, xal_bstream_t* stream);

// interop.cpp (ABI 1.1): imported memory and streams, IPC handles
xal_status_t mem_import(xal_bdevice_t* device, uint64_t native, size_t bytes,
                        uint32_t flags, xal_devptr_t* out_ptr);
xal_status_t mem_import_release(xal_bdevice_t* device, xal_devptr_t ptr);
xal_status_t stream_import(xal_bdevice_t* device, uint64_t native, uint32_t flags,
                           xal_bstream_t** out_stream);
xal_status_t mem_ipc_get(xal_bdevice_t* device, xal_devptr_t ptr, size_t bytes,
                         uint8_t* out_vendor);
xal_status_t mem_ipc_open(xal_bdevice_t* device, const uint8_t* vendor, size_t bytes,
                          int32_t owner_pid, xal_devptr_t* out_ptr);
xal_status_t mem_ipc_close(xal_bdevice_t* device, xal_devptr_t ptr);

}  // namespace xal::hip
