/*
 * xal_backend.h -- the plugin ABI between libxal and a backend.
 *
 * A backend is a shared library that exports one symbol:
 *
 *   const xal_backend_table_t* xal_backend_get(uint32_t core_abi_version);
 *
 * It returns a table (static storage, never freed) that starts with
 * {struct_size, abi_major, abi_minor, name, version} and then holds function
 * pointers. The core refuses a table whose abi_major differs from its own
 * (XAL_ERROR_ABI_MISMATCH) and accepts any older or newer minor: entries
 * past the table's struct_size are treated as NULL. The plugin may return
 * NULL if it cannot serve `core_abi_version`.
 *
 * Objects: the backend returns its own opaque objects (xal_b*_t); the core
 * wraps them in public handles. The core checks every handle and argument
 * before calling (null, kind, bounds through its allocation registry), so a
 * backend may assume that what it gets is one of its own live objects.
 *
 * Errors: an entry returns an xal_status_t; before returning an error it
 * should call services->set_error() with the vendor's code and a message.
 * An entry never throws and never aborts.
 *
 * Releases: mem_free, stream_destroy and event_destroy that return an error
 * have NOT released the object: the core keeps its handle (or allocation
 * record) so that the caller can retry, and calls the entry again at
 * xal_device_reset and xal_shutdown. A backend that released the object
 * (say, after a sticky error took the context) returns XAL_SUCCESS, never
 * an error. module_unload, host_free and comm_destroy release the object
 * whatever they return; their error is only reported.
 *
 * Threads: every entry may be called from any thread, concurrently, except
 * init/shutdown which the core serialises.
 *
 * Optional entries: NULL means XAL_ERROR_NOT_SUPPORTED, or the core's own
 * fallback where one exists (documented on the entry).
 */
#ifndef XAL_XAL_BACKEND_H_
#define XAL_XAL_BACKEND_H_

#include "xal/xal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xal_backend_s xal_backend_t; /* one backend instance */
typedef struct xal_bdevice_s xal_bdevice_t;
typedef struct xal_bstream_s xal_bstream_t;
typedef struct xal_bevent_s xal_bevent_t;
typedef struct xal_bmodule_s xal_bmodule_t;
typedef struct xal_bkernel_s xal_bkernel_t;
typedef struct xal_bcomm_s xal_bcomm_t;

typedef struct xal_backend_table_t xal_backend_table_t;

#define XAL_LOG_ERROR 0
#define XAL_LOG_WARNING 1
#define XAL_LOG_INFO 2
#define XAL_LOG_DEBUG 3

/* What the core offers a backend. Valid from init until shutdown returns. */
typedef struct xal_backend_services_t {
  size_t struct_size;
  uint32_t core_abi_version;
  /* Records the calling thread's error detail, which xal_last_error then
   * shows: the status the entry will return, the vendor's code and its name
   * (may be NULL) and a message. Returns `status` for convenience. */
  xal_status_t (*set_error)(xal_status_t status, int64_t vendor_code,
                            const char* vendor_name, const char* message);
  /* Writes a log line (XAL_LOG level) under the backend's name. */
  void (*log)(int level, const char* backend, const char* message);
  /* Loads another backend by name or path for a wrapper (the fault
   * backend): returns its table, which the wrapper then init()s itself.
   * The core keeps the plugin loaded until shutdown. On failure returns an
   * error and sets the detail (dlerror text, ABI mismatch), which it also
   * writes to `out_path` when given (the caller cannot read the detail of
   * the call in progress). */
  xal_status_t (*load_backend)(const char* name_or_path,
                               const xal_backend_table_t** out_table,
                               char* out_path, size_t path_capacity);
  /* Reads a configuration value: the environment variable `key`. NULL if
   * unset. The string lives until shutdown. */
  const char* (*get_config)(const char* key);
} xal_backend_services_t;

typedef struct xal_backend_init_args_t {
  size_t struct_size;
  const xal_backend_services_t* services;
  /* Backend-specific argument: the wrapped target for a wrapper
   * ("fault:mock" gives "mock"), else NULL. */
  const char* argument;
} xal_backend_init_args_t;

/* Describes a backend instance after init. */
typedef struct xal_backend_describe_t {
  size_t struct_size;
  char name[64];           /* display name, e.g. "fault(mock)" */
  char driver_version[64];
  uint32_t flags;          /* XAL_BACKEND_FLAG_* */
  char note[256];          /* e.g. "simulated driver" */
} xal_backend_describe_t;

/* Options a backend's native communicator receives. */
typedef struct xal_bcomm_options_t {
  size_t struct_size;
  uint32_t timeout_ms;
  uint32_t flags;
} xal_bcomm_options_t;

struct xal_backend_table_t {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;    /* short name: "mock", "cuda" */
  const char* version; /* plugin version string */

  /* --- lifecycle (required) ------------------------------------------- */
  /* Starts an instance. A backend without its driver or without devices
   * returns XAL_ERROR_BACKEND_UNAVAILABLE with the reason in set_error().
   * May be called more than once to make independent instances. */
  xal_status_t (*init)(const xal_backend_init_args_t* args,
                       xal_backend_t** out_backend);
  /* Frees every object of the instance. */
  xal_status_t (*shutdown)(xal_backend_t* backend);
  /* Optional: fills a description. */
  xal_status_t (*describe)(xal_backend_t* backend,
                           xal_backend_describe_t* out_describe);

  /* --- devices (required unless marked) -------------------------------- */
  xal_status_t (*device_count)(xal_backend_t* backend, uint32_t* out_count);
  xal_status_t (*device_get)(xal_backend_t* backend, uint32_t index,
                             xal_bdevice_t** out_device);
  /* Fills vendor fields; the core fills backend, index, parent_index. */
  xal_status_t (*device_get_properties)(xal_bdevice_t* device,
                                        xal_device_properties_t* out);
  xal_status_t (*device_synchronize)(xal_bdevice_t* device);
  /* Optional (NOT_SUPPORTED). The core has released the device's streams,
   * events and modules and aborted its communicators first; communicators
   * outlive the reset until comm_destroy. */
  xal_status_t (*device_reset)(xal_bdevice_t* device);
  /* Optional: NULL gives XAL_HEALTH_OK. */
  xal_status_t (*device_get_health)(xal_bdevice_t* device,
                                    xal_device_health_t* out);
  /* Optional: sensors; the core adds memory and its own counters. */
  xal_status_t (*device_get_metrics)(xal_bdevice_t* device,
                                     xal_device_metrics_t* out);

  /* --- memory (required) -------------------------------------------- */
  xal_status_t (*mem_alloc)(xal_bdevice_t* device, size_t bytes,
                            xal_devptr_t* out_ptr);
  xal_status_t (*mem_free)(xal_bdevice_t* device, xal_devptr_t ptr);
  xal_status_t (*mem_get_info)(xal_bdevice_t* device, uint64_t* out_free,
                               uint64_t* out_total);
  /* Optional: page-locked host memory. NULL: the core uses mlock'ed memory
   * and host_register. */
  xal_status_t (*host_alloc)(xal_backend_t* backend, size_t bytes,
                             uint32_t flags, void** out_ptr);
  xal_status_t (*host_free)(xal_backend_t* backend, void* ptr);
  /* Optional: make host memory allocated elsewhere fast for this backend. */
  xal_status_t (*host_register)(xal_backend_t* backend, void* ptr,
                                size_t bytes);
  xal_status_t (*host_unregister)(xal_backend_t* backend, void* ptr);

  /* --- streams (required) ------------------------------------------- */
  xal_status_t (*stream_create)(xal_bdevice_t* device, uint32_t flags,
                                xal_bstream_t** out_stream);
  xal_status_t (*stream_destroy)(xal_bstream_t* stream);
  xal_status_t (*stream_synchronize)(xal_bstream_t* stream);
  xal_status_t (*stream_query)(xal_bstream_t* stream);
  /* Optional: runs fn(user) on a host thread when the stream reaches this
   * point; later work on the stream waits until fn returns. The core uses
   * it for cross-backend waits and staged copies; without it the core
   * synchronises the stream on the calling thread instead. */
  xal_status_t (*stream_enqueue_host_func)(xal_bstream_t* stream,
                                           void (*fn)(void* user), void* user);

  /* --- copies (required; pointers are checked by the core) ----------- */
  xal_status_t (*memcpy_htod)(xal_bstream_t* stream, xal_devptr_t dst,
                              const void* src, size_t bytes);
  xal_status_t (*memcpy_dtoh)(xal_bstream_t* stream, void* dst,
                              xal_devptr_t src, size_t bytes);
  xal_status_t (*memcpy_dtod)(xal_bstream_t* stream, xal_devptr_t dst,
                              xal_devptr_t src, size_t bytes);
  /* Optional: between two devices of this instance. NULL: the core stages
   * through host memory. */
  xal_status_t (*memcpy_peer)(xal_bstream_t* stream, xal_bdevice_t* dst_device,
                              xal_devptr_t dst, xal_bdevice_t* src_device,
                              xal_devptr_t src, size_t bytes);
  xal_status_t (*memset)(xal_bstream_t* stream, xal_devptr_t dst,
                         uint8_t value, size_t bytes);

  /* --- events (required) -------------------------------------------- */
  xal_status_t (*event_create)(xal_bdevice_t* device, uint32_t flags,
                               xal_bevent_t** out_event);
  xal_status_t (*event_destroy)(xal_bevent_t* event);
  xal_status_t (*event_record)(xal_bevent_t* event, xal_bstream_t* stream);
  /* Both of this instance (any of its devices). */
  xal_status_t (*stream_wait_event)(xal_bstream_t* stream,
                                    xal_bevent_t* event);
  xal_status_t (*event_synchronize)(xal_bevent_t* event);
  xal_status_t (*event_query)(xal_bevent_t* event);
  xal_status_t (*event_elapsed_ms)(xal_bevent_t* start, xal_bevent_t* end,
                                   float* out_ms);

  /* --- modules and kernels (optional) -------------------------------- */
  xal_status_t (*module_load)(xal_bdevice_t* device, uint32_t format,
                              const void* image, size_t bytes,
                              xal_bmodule_t** out_module);
  xal_status_t (*module_unload)(xal_bmodule_t* module);
  xal_status_t (*kernel_get)(xal_bmodule_t* module, const char* name,
                             xal_bkernel_t** out_kernel);
  xal_status_t (*kernel_launch)(xal_bstream_t* stream, xal_bkernel_t* kernel,
                                const xal_launch_config_t* config, void** args,
                                size_t arg_count);

  /* --- native collectives (optional; NULL: the core's own path) ------- */
  /* One communicator per device, rank i on devices[i]. */
  xal_status_t (*comm_create)(xal_bdevice_t* const* devices, uint32_t n,
                              const xal_bcomm_options_t* options,
                              xal_bcomm_t** out_comms);
  xal_status_t (*comm_destroy)(xal_bcomm_t* comm);
  xal_status_t (*comm_abort)(xal_bcomm_t* comm);
  xal_status_t (*comm_get_async_error)(xal_bcomm_t* comm,
                                       xal_status_t* out_error);
  xal_status_t (*group_start)(xal_backend_t* backend);
  xal_status_t (*group_end)(xal_backend_t* backend);
  xal_status_t (*allreduce)(xal_bcomm_t* comm, xal_devptr_t send,
                            xal_devptr_t recv, size_t count, xal_dtype_t dtype,
                            xal_op_t op, xal_bstream_t* stream);
  xal_status_t (*broadcast)(xal_bcomm_t* comm, xal_devptr_t send,
                            xal_devptr_t recv, size_t count, xal_dtype_t dtype,
                            uint32_t root, xal_bstream_t* stream);
  xal_status_t (*reduce)(xal_bcomm_t* comm, xal_devptr_t send,
                         xal_devptr_t recv, size_t count, xal_dtype_t dtype,
                         xal_op_t op, uint32_t root, xal_bstream_t* stream);
  xal_status_t (*allgather)(xal_bcomm_t* comm, xal_devptr_t send,
                            xal_devptr_t recv, size_t send_count,
                            xal_dtype_t dtype, xal_bstream_t* stream);
  xal_status_t (*reduce_scatter)(xal_bcomm_t* comm, xal_devptr_t send,
                                 xal_devptr_t recv, size_t recv_count,
                                 xal_dtype_t dtype, xal_op_t op,
                                 xal_bstream_t* stream);
  xal_status_t (*alltoall)(xal_bcomm_t* comm, xal_devptr_t send,
                           xal_devptr_t recv, size_t count, xal_dtype_t dtype,
                           xal_bstream_t* stream);

  /* --- host access to device memory (optional) ------------------------ */
  /* For backends whose device memory is host addressable (the mock, unified
   * memory): returns a host pointer for [ptr, ptr+bytes) or NULL. The core
   * and collectives use it to avoid staging copies. */
  void* (*device_ptr_to_host)(xal_bdevice_t* device, xal_devptr_t ptr,
                              size_t bytes);

  /* --- extensions (optional) ------------------------------------------ */
  /* Returns a backend-defined table for a named extension (e.g.
   * "xal_fault_control_v1" of the fault backend), or NULL. */
  const void* (*get_extension)(xal_backend_t* backend, const char* name);

  /* --- added after 1.0 (optional) ------------------------------------- */
  /* What the plugin has been verified on, e.g. "verified on a simulated
   * driver only, not yet on NVIDIA hardware"; NULL when it says nothing.
   * A static string, read before init: the core copies it into
   * xal_backend_info_t.note when init fails, so that a machine without the
   * driver still shows it (after a successful init, describe's note, which
   * should begin with the same words, is shown instead). */
  const char* support_note;

  /* --- added in 1.1: interop (optional) ------------------------------- */
  /* Wraps memory the caller allocated through the vendor API (`native`: a
   * CUdeviceptr, hipDeviceptr_t, Level Zero pointer, cl_mem, or with
   * XAL_MEM_IMPORT_HOST a host pointer on a host-addressable device) of
   * `bytes` as a device pointer of `device`, which the backend does not own.
   * The core has checked that bytes > 0 and the flags are known. */
  xal_status_t (*mem_import)(xal_bdevice_t* device, uint64_t native,
                             size_t bytes, uint32_t flags,
                             xal_devptr_t* out_ptr);
  /* Forgets an import; the memory itself stays the caller's. Required when
   * mem_import is set. Releases whatever it returns. */
  xal_status_t (*mem_import_release)(xal_bdevice_t* device, xal_devptr_t ptr);
  /* Adopts a native stream or queue (CUstream, hipStream_t, a Level Zero
   * immediate command list, a cl_command_queue; on the mock the
   * xal_bstream_t* of one of its streams). stream_destroy of the result
   * releases only the backend's wrapper; the native stream stays alive. */
  xal_status_t (*stream_import)(xal_bdevice_t* device, uint64_t native,
                                uint32_t flags, xal_bstream_t** out_stream);
  /* Writes the vendor part (XAL_IPC_VENDOR_BYTES) of an IPC handle for the
   * allocation [ptr, ptr+bytes) made by mem_alloc. The core writes and
   * checks the rest of xal_ipc_handle_t (backend, host, owner process). */
  xal_status_t (*mem_ipc_get)(xal_bdevice_t* device, xal_devptr_t ptr,
                              size_t bytes, uint8_t* out_vendor);
  /* Maps the memory of another process's handle (vendor part, `bytes`
   * long, exported by process `owner_pid` of this host) on `device`. */
  xal_status_t (*mem_ipc_open)(xal_bdevice_t* device, const uint8_t* vendor,
                               size_t bytes, int32_t owner_pid,
                               xal_devptr_t* out_ptr);
  /* Unmaps what mem_ipc_open mapped. Required when mem_ipc_open is set.
   * Releases whatever it returns. */
  xal_status_t (*mem_ipc_close)(xal_bdevice_t* device, xal_devptr_t ptr);

  /* --- added in 1.1: point-to-point (optional) ----------------------- */
  /* ncclSend / ncclRecv: `count` elements to / from rank `peer` of the
   * communicator, queued on `stream`; between group_start and group_end a
   * rank may post several without deadlock. NULL, or XAL_ERROR_NOT_SUPPORTED
   * returned before anything was queued: the core runs the message through
   * host memory itself (docs/COLLECTIVES.md). */
  xal_status_t (*comm_send)(xal_bcomm_t* comm, xal_devptr_t send, size_t count,
                            xal_dtype_t dtype, uint32_t peer,
                            xal_bstream_t* stream);
  xal_status_t (*comm_recv)(xal_bcomm_t* comm, xal_devptr_t recv, size_t count,
                            xal_dtype_t dtype, uint32_t peer,
                            xal_bstream_t* stream);

  /* New entries go here, at the end, with a minor version bump, and one
   * line in XAL_BACKEND_ENTRIES below. */
};

/* ------------------------------------------------------------------------ */
/* The table's entries as data                                               */
/* ------------------------------------------------------------------------ */

/* Every member of xal_backend_table_t after `version`, in table order:
 *   X(name, presence, minor)
 * presence: XAL_ENTRY_REQUIRED (a table without it is refused),
 * XAL_ENTRY_OPTIONAL (NULL means NOT_SUPPORTED or the core's fallback) or
 * XAL_ENTRY_DATA (a value, not a function); minor: the ABI 1.x minor that
 * added it. The loader's checks, the fault backend's wrappers and the
 * backends' tables (xalsupport/table.hpp) are made from this list, and a
 * compile-time check in the core holds it to the struct above. A new entry
 * is one member at the end of the struct and one line at the end here. */
#define XAL_ENTRY_REQUIRED 1
#define XAL_ENTRY_OPTIONAL 0
#define XAL_ENTRY_DATA 2

#define XAL_BACKEND_ENTRIES(X)                       \
  X(init, XAL_ENTRY_REQUIRED, 0)                     \
  X(shutdown, XAL_ENTRY_REQUIRED, 0)                 \
  X(describe, XAL_ENTRY_OPTIONAL, 0)                 \
  X(device_count, XAL_ENTRY_REQUIRED, 0)             \
  X(device_get, XAL_ENTRY_REQUIRED, 0)               \
  X(device_get_properties, XAL_ENTRY_REQUIRED, 0)    \
  X(device_synchronize, XAL_ENTRY_REQUIRED, 0)       \
  X(device_reset, XAL_ENTRY_OPTIONAL, 0)             \
  X(device_get_health, XAL_ENTRY_OPTIONAL, 0)        \
  X(device_get_metrics, XAL_ENTRY_OPTIONAL, 0)       \
  X(mem_alloc, XAL_ENTRY_REQUIRED, 0)                \
  X(mem_free, XAL_ENTRY_REQUIRED, 0)                 \
  X(mem_get_info, XAL_ENTRY_REQUIRED, 0)             \
  X(host_alloc, XAL_ENTRY_OPTIONAL, 0)               \
  X(host_free, XAL_ENTRY_OPTIONAL, 0)                \
  X(host_register, XAL_ENTRY_OPTIONAL, 0)            \
  X(host_unregister, XAL_ENTRY_OPTIONAL, 0)          \
  X(stream_create, XAL_ENTRY_REQUIRED, 0)            \
  X(stream_destroy, XAL_ENTRY_REQUIRED, 0)           \
  X(stream_synchronize, XAL_ENTRY_REQUIRED, 0)       \
  X(stream_query, XAL_ENTRY_REQUIRED, 0)             \
  X(stream_enqueue_host_func, XAL_ENTRY_OPTIONAL, 0) \
  X(memcpy_htod, XAL_ENTRY_REQUIRED, 0)              \
  X(memcpy_dtoh, XAL_ENTRY_REQUIRED, 0)              \
  X(memcpy_dtod, XAL_ENTRY_REQUIRED, 0)              \
  X(memcpy_peer, XAL_ENTRY_OPTIONAL, 0)              \
  X(memset, XAL_ENTRY_REQUIRED, 0)                   \
  X(event_create, XAL_ENTRY_REQUIRED, 0)             \
  X(event_destroy, XAL_ENTRY_REQUIRED, 0)            \
  X(event_record, XAL_ENTRY_REQUIRED, 0)             \
  X(stream_wait_event, XAL_ENTRY_REQUIRED, 0)        \
  X(event_synchronize, XAL_ENTRY_REQUIRED, 0)        \
  X(event_query, XAL_ENTRY_REQUIRED, 0)              \
  X(event_elapsed_ms, XAL_ENTRY_REQUIRED, 0)         \
  X(module_load, XAL_ENTRY_OPTIONAL, 0)              \
  X(module_unload, XAL_ENTRY_OPTIONAL, 0)            \
  X(kernel_get, XAL_ENTRY_OPTIONAL, 0)               \
  X(kernel_launch, XAL_ENTRY_OPTIONAL, 0)            \
  X(comm_create, XAL_ENTRY_OPTIONAL, 0)              \
  X(comm_destroy, XAL_ENTRY_OPTIONAL, 0)             \
  X(comm_abort, XAL_ENTRY_OPTIONAL, 0)               \
  X(comm_get_async_error, XAL_ENTRY_OPTIONAL, 0)     \
  X(group_start, XAL_ENTRY_OPTIONAL, 0)              \
  X(group_end, XAL_ENTRY_OPTIONAL, 0)                \
  X(allreduce, XAL_ENTRY_OPTIONAL, 0)                \
  X(broadcast, XAL_ENTRY_OPTIONAL, 0)                \
  X(reduce, XAL_ENTRY_OPTIONAL, 0)                   \
  X(allgather, XAL_ENTRY_OPTIONAL, 0)                \
  X(reduce_scatter, XAL_ENTRY_OPTIONAL, 0)           \
  X(alltoall, XAL_ENTRY_OPTIONAL, 0)                 \
  X(device_ptr_to_host, XAL_ENTRY_OPTIONAL, 0)       \
  X(get_extension, XAL_ENTRY_OPTIONAL, 0)            \
  X(support_note, XAL_ENTRY_DATA, 1)                 \
  X(mem_import, XAL_ENTRY_OPTIONAL, 1)               \
  X(mem_import_release, XAL_ENTRY_OPTIONAL, 1)       \
  X(stream_import, XAL_ENTRY_OPTIONAL, 1)            \
  X(mem_ipc_get, XAL_ENTRY_OPTIONAL, 1)              \
  X(mem_ipc_open, XAL_ENTRY_OPTIONAL, 1)             \
  X(mem_ipc_close, XAL_ENTRY_OPTIONAL, 1)            \
  X(comm_send, XAL_ENTRY_OPTIONAL, 1)                \
  X(comm_recv, XAL_ENTRY_OPTIONAL, 1)

/* The table's size in ABI 1.0: every entry through get_extension. A plugin
 * built against the 1.0 headers returns a table of this size. */
#define XAL_BACKEND_TABLE_SIZE_1_0 \
  (offsetof(xal_backend_table_t, get_extension) + sizeof(void*))

/* Vendor bytes of an IPC handle that mem_ipc_get may write. */
#define XAL_IPC_VENDOR_BYTES 64

/* ------------------------------------------------------------------------ */
/* Introspection, exported by libxal: for the conformance suite and          */
/* xal-bench, which time a backend straight through its table. Frameworks    */
/* have no need of these.                                                    */
/* ------------------------------------------------------------------------ */

/* The table and instance of loaded backend `index` (xal_backend_count). */
XAL_API xal_status_t xal_backend_get_native(uint32_t index,
                                            const xal_backend_table_t** out_table,
                                            xal_backend_t** out_backend);

/* The backend object behind any public handle (device, stream, event,
 * module, kernel, comm): an xal_bdevice_t*, xal_bstream_t*, ... */
XAL_API xal_status_t xal_handle_get_native(const void* handle,
                                           const xal_backend_table_t** out_table,
                                           void** out_native);

/* The check every plugin's xal_backend_get makes first, the same way:
 * returns 1 when the plugin can serve a core of `core_abi_version` (same
 * major; any minor, older or newer), else 0, and the plugin then returns
 * NULL, which the loader reports as an ABI mismatch naming both versions. */
static inline int xal_backend_abi_compatible(uint32_t core_abi_version) {
  return XAL_ABI_MAJOR(core_abi_version) == XAL_ABI_VERSION_MAJOR;
}

/* The one symbol a plugin exports. */
typedef const xal_backend_table_t* (*xal_backend_get_fn)(
    uint32_t core_abi_version);

#define XAL_BACKEND_ENTRY_SYMBOL "xal_backend_get"

#if defined(__GNUC__)
#define XAL_BACKEND_EXPORT __attribute__((visibility("default")))
#else
#define XAL_BACKEND_EXPORT
#endif

/* The smallest table the core accepts: through the required entries (the
 * events block). A shorter table is refused with XAL_ERROR_ABI_MISMATCH;
 * entries past a table's struct_size are taken as NULL. */
#define XAL_BACKEND_TABLE_MIN_SIZE \
  (offsetof(xal_backend_table_t, event_elapsed_ms) + sizeof(void*))

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XAL_XAL_BACKEND_H_ */
