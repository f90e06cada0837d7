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
#include "xalsupport/entry_decls.h"

namespace xal::cuda {

// The required entries (init, shutdown, devices, memory, streams, copies,
// memset, events), declared from the entry list with the table's types;
// each is defined in the file of its concept below. The optional ones and
// the backend's own functions follow, by file.
XAL_SUPPORT_DECLARE_REQUIRED_ENTRIES()

// What this backend has been run on: the table's support_note (shown when
// init fails) and the start of describe's note.
inline constexpr char support_note[] =
    "verified on an H200; multi-GPU paths on a simulated driver only";

// backend.cpp: the instance (the driver, NVML and NCCL opened), its
// description, and the embedded kernels' extension.
XAL_SUPPORT_DECLARE_ENTRY(describe)
XAL_SUPPORT_DECLARE_ENTRY(get_extension)

// device.cpp
xal_status_t init_devices(xal_backend_t* backend);
XAL_SUPPORT_DECLARE_DEVICE_STATE_ENTRIES()
// Releases every object of the device and its primary context (shutdown).
void release_device(xal_bdevice_t* device);

// memory.cpp
XAL_SUPPORT_DECLARE_HOST_MEMORY_ENTRIES()
// Registers the backend's page-locked blocks again after a device reset
// (which drops the reset context's registrations); failures are logged.
void reregister_host_memory(xal_backend_s* backend);

// stream.cpp (streams), copy.cpp (copies, memset, peer access)
XAL_SUPPORT_DECLARE_ENTRY(stream_enqueue_host_func)
XAL_SUPPORT_DECLARE_ENTRY(memcpy_peer)
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
XAL_SUPPORT_DECLARE_INTEROP_ENTRIES()
// Whether the driver has what mem_import, stream_import and the IPC entries
// need (device_get_properties' capability bits).
bool driver_can_import_memory(const xal_backend_s* backend);
bool driver_can_import_streams(const xal_backend_s* backend);
bool driver_can_share_memory(const xal_backend_s* backend);

// event.cpp
// (the event entries are all required: declared above)

// module.cpp
XAL_SUPPORT_DECLARE_MODULE_ENTRIES()
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

// comm.cpp (only in the table variant used when libnccl.so.2 loads)
XAL_SUPPORT_DECLARE_COLLECTIVE_ENTRIES()
// ncclSend / ncclRecv: one message to or from rank `peer` (xal_backend.h).
XAL_SUPPORT_DECLARE_ENTRY(comm_send)
XAL_SUPPORT_DECLARE_ENTRY(comm_recv)

// peer_comm.cpp (the table variant of XAL_CUDA_COLLECTIVES=peer: peer
// copies and xal's embedded reductions, kernels_embedded(); its xal_bcomm_t
// are its own)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_comm_create, comm_create)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_comm_destroy, comm_destroy)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_comm_abort, comm_abort)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_comm_get_async_error, comm_get_async_error)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_group_start, group_start)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_group_end, group_end)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_allreduce, allreduce)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_broadcast, broadcast)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_reduce, reduce)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_allgather, allgather)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_reduce_scatter, reduce_scatter)
XAL_SUPPORT_DECLARE_ENTRY_AS(peer_alltoall, alltoall)

}  // namespace xal::cuda
