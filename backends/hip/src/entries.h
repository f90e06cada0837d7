// The HIP backend's plugin-table entries (C linkage not needed: the table
// holds plain function pointers). Each wraps its body in guarded().
// Ownership and threading follow xal_backend.h for the matching entry.
#pragma once

#include "xal/xal_backend.h"
#include "xalsupport/entry_decls.h"

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
XAL_SUPPORT_DECLARE_ENTRY(describe)

// device.cpp, device_state.cpp (synchronize, reset, health, metrics)
XAL_SUPPORT_DECLARE_DEVICE_STATE_ENTRIES()

// memory.cpp
XAL_SUPPORT_DECLARE_HOST_MEMORY_ENTRIES()

// stream.cpp
XAL_SUPPORT_DECLARE_ENTRY(stream_enqueue_host_func)

// copy.cpp
XAL_SUPPORT_DECLARE_ENTRY(memcpy_peer)

// module.cpp
XAL_SUPPORT_DECLARE_MODULE_ENTRIES()

// comm.cpp (RCCL)
XAL_SUPPORT_DECLARE_COLLECTIVE_ENTRIES()
XAL_SUPPORT_DECLARE_ENTRY(comm_send)
XAL_SUPPORT_DECLARE_ENTRY(comm_recv)

// interop.cpp (ABI 1.1): imported memory and streams, IPC handles
XAL_SUPPORT_DECLARE_INTEROP_ENTRIES()

}  // namespace xal::hip
