// Declarations of a backend's table entries, made from the plugin table's
// own member types (xal_backend_table_t in xal_backend.h) instead of
// written out again in every backend's entries.h. Each macro declares, in
// the current namespace, functions named after the entries; the backend
// defines them in the file of their concept, and its table (table.h) takes
// exactly these types.
#pragma once

#include <type_traits>

#include "xal/xal_backend.h"

// The entry `name` with the table's type, e.g. XAL_SUPPORT_DECLARE_ENTRY(describe).
#define XAL_SUPPORT_DECLARE_ENTRY(name) \
  std::remove_pointer_t<decltype(xal_backend_table_t::name)> name;

// A function `function` with the type of the entry `name`, for a backend
// with two variants of one entry (CUDA's peer_allreduce beside allreduce).
#define XAL_SUPPORT_DECLARE_ENTRY_AS(function, name) \
  std::remove_pointer_t<decltype(xal_backend_table_t::name)> function;

// Every REQUIRED entry of the list (XAL_BACKEND_ENTRIES): a backend defines
// each of them anyway.
#define XAL_SUPPORT_DECLARE_XAL_ENTRY_REQUIRED(name) XAL_SUPPORT_DECLARE_ENTRY(name)
#define XAL_SUPPORT_DECLARE_XAL_ENTRY_OPTIONAL(name)
#define XAL_SUPPORT_DECLARE_XAL_ENTRY_DATA(name)
#define XAL_SUPPORT_DECLARE_ONE(name, presence, minor) XAL_SUPPORT_DECLARE_##presence(name)
#define XAL_SUPPORT_DECLARE_REQUIRED_ENTRIES() XAL_BACKEND_ENTRIES(XAL_SUPPORT_DECLARE_ONE)

// Optional entries that go together:
// a device's reset, health and metrics
#define XAL_SUPPORT_DECLARE_DEVICE_STATE_ENTRIES() \
  XAL_SUPPORT_DECLARE_ENTRY(device_reset)          \
  XAL_SUPPORT_DECLARE_ENTRY(device_get_health)     \
  XAL_SUPPORT_DECLARE_ENTRY(device_get_metrics)

// page-locked host memory and host registration
#define XAL_SUPPORT_DECLARE_HOST_MEMORY_ENTRIES() \
  XAL_SUPPORT_DECLARE_ENTRY(host_alloc)           \
  XAL_SUPPORT_DECLARE_ENTRY(host_free)            \
  XAL_SUPPORT_DECLARE_ENTRY(host_register)        \
  XAL_SUPPORT_DECLARE_ENTRY(host_unregister)

// modules and kernels (module_load, module_unload, kernel_get, kernel_launch)
#define XAL_SUPPORT_DECLARE_MODULE_ENTRIES() \
  XAL_SUPPORT_DECLARE_ENTRY(module_load)     \
  XAL_SUPPORT_DECLARE_ENTRY(module_unload)   \
  XAL_SUPPORT_DECLARE_ENTRY(kernel_get)      \
  XAL_SUPPORT_DECLARE_ENTRY(kernel_launch)

// ABI 1.1 interop: imported memory and streams, IPC handles
#define XAL_SUPPORT_DECLARE_INTEROP_ENTRIES()     \
  XAL_SUPPORT_DECLARE_ENTRY(mem_import)           \
  XAL_SUPPORT_DECLARE_ENTRY(mem_import_release)   \
  XAL_SUPPORT_DECLARE_ENTRY(stream_import)        \
  XAL_SUPPORT_DECLARE_ENTRY(mem_ipc_get)          \
  XAL_SUPPORT_DECLARE_ENTRY(mem_ipc_open)         \
  XAL_SUPPORT_DECLARE_ENTRY(mem_ipc_close)

// the native collectives of ABI 1.0 (communicators, groups and the six
// collectives; comm_send and comm_recv are declared one by one)
#define XAL_SUPPORT_DECLARE_COLLECTIVE_ENTRIES()   \
  XAL_SUPPORT_DECLARE_ENTRY(comm_create)           \
  XAL_SUPPORT_DECLARE_ENTRY(comm_destroy)          \
  XAL_SUPPORT_DECLARE_ENTRY(comm_abort)            \
  XAL_SUPPORT_DECLARE_ENTRY(comm_get_async_error)  \
  XAL_SUPPORT_DECLARE_ENTRY(group_start)           \
  XAL_SUPPORT_DECLARE_ENTRY(group_end)             \
  XAL_SUPPORT_DECLARE_ENTRY(allreduce)             \
  XAL_SUPPORT_DECLARE_ENTRY(broadcast)             \
  XAL_SUPPORT_DECLARE_ENTRY(reduce)                \
  XAL_SUPPORT_DECLARE_ENTRY(allgather)             \
  XAL_SUPPORT_DECLARE_ENTRY(reduce_scatter)        \
  XAL_SUPPORT_DECLARE_ENTRY(alltoall)
