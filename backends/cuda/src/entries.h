// entries.h -- the plugin table entries, one group per source file
// (backend.cpp, device.cpp, memory.cpp, stream.cpp, copy.cpp, event.cpp,
// module.cpp, comm.cpp).
// Each is a C-callable function that never throws; plugin.cpp puts them in
// the table. Thread-safety as in xal_backend.h.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "xal/xal_backend.h"

namespace xal::cuda {

// What this backend has been run on: the table's support_note (shown when
// init fails) and the start of describe's note.
inline constexpr char support_note[] =
    "verified on an H200; multi-GPU paths on a simulated driver only";

// backend.cpp: the instance (the driver, NVML and NCCL opened), its
// description, and the embedded kernels' extension.
xal_status_t init(const xal_backend_init_args_t* args, xal_backend_t** out_backend);
xal_status_t shutdown(xal_backend_t* backend);
xal_status_t describe(xal_backend_t* backend, xal_backend_describe_t* out);
const void* get_extension(xal_backend_t* backend, const char* name);

// device.cpp
xal_status_t init_devices(xal_backend_t* backend);
xal_status_t device_count(xal_backend_t* backend, uint32_t* out_count);
xal_status_t device_get(xal_backend_t* backend, uint32_t index,
                        xal_bdevice_t** out_device);
xal_status_t device_get_properties(xal_bdevice_t* device,
                                   xal_device_properties_t* out);
xal_status_t device_synchronize(xal_bdevice_t* device);
xal_status_t device_reset(xal_bdevice_t* device);
xal_status_t device_get_health(xal_bdevice_t* device, xal_device_health_t* out);
xal_status_t device_get_metrics(xal_bdevice_t* device,
                                xal_device_metrics_t* out);
// Releases every object of the device and its primary context (shutdown).
void release_device(xal_bdevice_t* device);

// memory.cpp
xal_status_t mem_alloc(xal_bdevice_t* device, size_t bytes,
                       xal_devptr_t* out_ptr);
xal_status_t mem_free(xal_bdevice_t* device, xal_devptr_t ptr);
xal_status_t mem_get_info(xal_bdevice_t* device, uint64_t* out_free,
                          uint64_t* out_total);
xal_status_t host_alloc(xal_backend_t* backend, size_t bytes, uint32_t flags,
                        void** out_ptr);
xal_status_t host_free(xal_backend_t* backend, void* ptr);
xal_status_t host_register(xal_backend_t* backend, void* ptr, size_t bytes);
xal_status_t host_unregister(xal_backend_t* backend, void* ptr);
// Registers the backend's page-locked blocks again after a device reset
// (which drops the reset context's registrations); failures are logged.
void reregister_host_memory(xal_backend_s* backend);

// stream.cpp (streams), copy.cpp (copies, memset, peer access)
xal_status_t stream_create(xal_bdevice_t* device, uint32_t flags,
                           xal_bstream_t** out_stream);
xal_status_t stream_destroy(xal_bstream_t* stream);
xal_status_t stream_synchronize(xal_bstream_t* stream);
xal_status_t stream_query(xal_bstream_t* stream);
xal_status_t stream_enqueue_host_func(xal_bstream_t* stream,
                                      void (*fn)(void* user), void* user);
xal_status_t memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst,
                         const void* src, size_t bytes);
xal_status_t memcpy_dtoh(xal_bstream_t* stream, void* dst, xal_devptr_t src,
                         size_t bytes);
xal_status_t memcpy_dtod(xal_bstream_t* stream, xal_devptr_t dst,
                         xal_devptr_t src, size_t bytes);
xal_status_t memcpy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device,
                         xal_devptr_t dst, xal_bdevice_t* src_device,
                         xal_devptr_t src, size_t bytes);
xal_status_t memset(xal_bstream_t* stream, xal_devptr_t dst, uint8_t value,
                       size_t bytes);
// For the collectives without NCCL (peer_clique.cpp), whose host functions
// make no driver call that may wait for the device (README, Host
// functions). Enables peer access from `from` to `to` where the hardware
// allows it (once; memcpy_peer does it on first use). Thread-safe.
void peer_access_enable(xal_bdevice_t* from, xal_bdevice_t* to);
// memcpy_peer without enabling peer access first (without it, the driver
// stages the copy).
xal_status_t memcpy_peer_as_is(xal_bstream_t* stream, xal_bdevice_t* dst_device,
                               xal_devptr_t dst, xal_bdevice_t* src_device,
                               xal_devptr_t src, size_t bytes);
// XAL_SUCCESS when the stream's host functions run on a thread of their
// own (host_funcs.h; made now if not yet); NOT_SUPPORTED, unrecorded, with
// *out_missing saying why when they go straight to the driver; the
// stream's error (recorded) when it is stale or its device unhealthy.
xal_status_t stream_has_host_func_runner(xal_bstream_t* stream, std::string* out_missing);

// interop.cpp (ABI 1.1): memory and streams the caller made through the
// driver, and memory shared with the other processes of the host
xal_status_t mem_import(xal_bdevice_t* device, uint64_t native, size_t bytes,
                        uint32_t flags, xal_devptr_t* out_ptr);
xal_status_t mem_import_release(xal_bdevice_t* device, xal_devptr_t ptr);
xal_status_t stream_import(xal_bdevice_t* device, uint64_t native,
                           uint32_t flags, xal_bstream_t** out_stream);
xal_status_t mem_ipc_get(xal_bdevice_t* device, xal_devptr_t ptr, size_t bytes,
                         uint8_t* out_vendor);
xal_status_t mem_ipc_open(xal_bdevice_t* device, const uint8_t* vendor,
                          size_t bytes, int32_t owner_pid,
                          xal_devptr_t* out_ptr);
xal_status_t mem_ipc_close(xal_bdevice_t* device, xal_devptr_t ptr);
// Whether the driver has what mem_import, stream_import and the IPC entries
// need (device_get_properties' capability bits).
bool driver_can_import_memory(const xal_backend_s* backend);
bool driver_can_import_streams(const xal_backend_s* backend);
bool driver_can_share_memory(const xal_backend_s* backend);

// event.cpp
xal_status_t event_create(xal_bdevice_t* device, uint32_t flags,
                          xal_bevent_t** out_event);
xal_status_t event_destroy(xal_bevent_t* event);
xal_status_t event_record(xal_bevent_t* event, xal_bstream_t* stream);
xal_status_t stream_wait_event(xal_bstream_t* stream, xal_bevent_t* event);
xal_status_t event_synchronize(xal_bevent_t* event);
xal_status_t event_query(xal_bevent_t* event);
xal_status_t event_elapsed_ms(xal_bevent_t* start, xal_bevent_t* end,
                              float* out_ms);

// module.cpp
xal_status_t module_load(xal_bdevice_t* device, uint32_t format,
                         const void* image, size_t bytes,
                         xal_bmodule_t** out_module);
xal_status_t module_unload(xal_bmodule_t* module);
// One image for module_load_any: its format, bytes and a label for messages.
struct ModuleImage {
  uint32_t format;
  const void* data;
  size_t bytes;
  const char* label;
};
// Loads the first of `images` that the driver accepts (xal's embedded
// kernels: the fatbin, then the PTX). When all fail, the error names `what`
// and each image tried with its CUDA error and JIT log; with one image and
// an empty `what`, the error is that image's. Images are not validated.
// Thread-safe.
xal_status_t module_load_any(xal_bdevice_t* device,
                             std::span<const ModuleImage> images,
                             const std::string& what,
                             xal_bmodule_t** out_module);
xal_status_t kernel_get(xal_bmodule_t* module, const char* name,
                        xal_bkernel_t** out_kernel);
xal_status_t kernel_launch(xal_bstream_t* stream, xal_bkernel_t* kernel,
                           const xal_launch_config_t* config, void** args,
                           size_t arg_count);

// comm.cpp (only in the table variant used when libnccl.so.2 loads)
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
// ncclSend / ncclRecv: one message to or from rank `peer` (xal_backend.h).
xal_status_t comm_send(xal_bcomm_t* comm, xal_devptr_t send, size_t count,
                       xal_dtype_t dtype, uint32_t peer, xal_bstream_t* stream);
xal_status_t comm_recv(xal_bcomm_t* comm, xal_devptr_t recv, size_t count,
                       xal_dtype_t dtype, uint32_t peer, xal_bstream_t* stream);

// peer_comm.cpp (the table variant of XAL_CUDA_COLLECTIVES=peer: peer
// copies and xal's embedded reductions, kernels_embedded(); its xal_bcomm_t
// are its own)
xal_status_t peer_comm_create(xal_bdevice_t* const* devices, uint32_t n,
                              const xal_bcomm_options_t* options, xal_bcomm_t** out_comms);
xal_status_t peer_comm_destroy(xal_bcomm_t* comm);
xal_status_t peer_comm_abort(xal_bcomm_t* comm);
xal_status_t peer_comm_get_async_error(xal_bcomm_t* comm, xal_status_t* out_error);
xal_status_t peer_group_start(xal_backend_t* backend);
xal_status_t peer_group_end(xal_backend_t* backend);
xal_status_t peer_allreduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t count, xal_dtype_t dtype, xal_op_t op, xal_bstream_t* stream);
xal_status_t peer_broadcast(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t count, xal_dtype_t dtype, uint32_t root,
                            xal_bstream_t* stream);
xal_status_t peer_reduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                         xal_dtype_t dtype, xal_op_t op, uint32_t root, xal_bstream_t* stream);
xal_status_t peer_allgather(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t send_count, xal_dtype_t dtype, xal_bstream_t* stream);
xal_status_t peer_reduce_scatter(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                                 size_t recv_count, xal_dtype_t dtype, xal_op_t op,
                                 xal_bstream_t* stream);
xal_status_t peer_alltoall(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                           xal_dtype_t dtype, xal_bstream_t* stream);

}  // namespace xal::cuda
