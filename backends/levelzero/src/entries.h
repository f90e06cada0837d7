// The Level Zero backend's plugin-table entries (C linkage not needed: the table
// holds plain function pointers). Each wraps its body in guarded().
// Ownership and threading follow xal_backend.h for the matching entry.
#pragma once

#include <memory>

#include "backend.h"
#include "xal/xal_backend.h"
#include "xalsupport/entry_decls.h"

namespace xal::levelzero {

// The required entries (init, shutdown, devices, memory, streams, copies,
// memset, events), declared from the entry list with the table's types;
// each is defined in the file of its concept (backend.cpp, device.cpp,
// memory.cpp, stream.cpp, copy.cpp, event.cpp). The optional ones follow.
XAL_SUPPORT_DECLARE_REQUIRED_ENTRIES()

// What this backend has been run on: the table's support_note (shown when
// init fails) and the start of describe's note.
inline constexpr char support_note[] =
    "verified on a simulated loader only, not yet on Intel hardware";

// backend.cpp
XAL_SUPPORT_DECLARE_ENTRY(describe)

// device.cpp
XAL_SUPPORT_DECLARE_DEVICE_STATE_ENTRIES()

// memory.cpp
XAL_SUPPORT_DECLARE_ENTRY(host_alloc)
XAL_SUPPORT_DECLARE_ENTRY(host_free)

// copy.cpp
XAL_SUPPORT_DECLARE_ENTRY(memcpy_peer)

// module.cpp
XAL_SUPPORT_DECLARE_MODULE_ENTRIES()

// interop.cpp (ABI 1.1): imported memory and lists, IPC handles
XAL_SUPPORT_DECLARE_INTEROP_ENTRIES()

// internal.cpp: shared by the files above
// Releases the native objects of `device` (streams, events, modules,
// memory) of its current generation and bumps the generation. On a healthy
// device its native events are first waited for (their records, and the
// streams that wait on them), within XAL_LEVELZERO_SYNC_TIMEOUT_MS. The
// caller holds no device lock.
void release_device_objects(xal_bdevice_s* device);
// Appends a barrier signalling the stream's sync event and waits for it
// (or, with `wait` false, only queries it). Thread-safe.
xal_status_t stream_fence(xal_bstream_s* stream, bool wait);
// memory.cpp: tries again the host frees the driver refused (host_free),
// dropping those that succeed and those of `ending` (a context about to be
// destroyed or retired, which takes its memory with it; may be null). The
// caller holds the backend's host_mutex.
void retry_host_leftovers(xal_backend_s* backend, ze_context_handle_t ending);
// A copy on the stream's list, with the in-order barriers where needed.
xal_status_t append_copy(xal_bstream_s* stream, void* dst, const void* src,
                         size_t bytes, const char* what);
// On an imported list, a barrier that orders what comes next after the
// owner's work appended before it; nothing on the backend's own lists. The
// caller holds the stream's mutex.
xal_status_t barrier_before(xal_bstream_s* stream);
// XAL_SUCCESS, or INVALID_ARGUMENT when [ptr, ptr+bytes) is IPC memory of
// `device` whose exporter has ended (`what` names the operation).
xal_status_t owner_check(const xal_bdevice_s* device, xal_devptr_t ptr, size_t bytes,
                         const char* what);

// metrics.cpp: reads the energy counter that device_get_metrics reports
// energy from (energy since init); without it energy is left out. Called
// once per device at init, before any other thread uses it.
void sysman_start(xal_bdevice_s* device);

// native_events.cpp: native events and their retirement (see NativeEvent)
// A native event in a pool of its own, visible to every device of the
// driver (with kernel timestamps when `timing`). Thread-safe.
xal_status_t native_event_create(xal_bdevice_s* device, bool timing,
                                 std::shared_ptr<NativeEvent>* out);
// Whether the device no longer uses `native`: its record, if any, has
// signalled (or the device is lost) and every stream that queued a wait on
// it is past that wait (or destroyed, invalidated or lost). Without `wait`
// nothing blocks (a waiting stream is queried, as stream_query does); with
// it, each wait is bounded by XAL_LEVELZERO_SYNC_TIMEOUT_MS. Streams found
// past their wait are dropped from its waiters. Thread-safe; the caller
// holds no stream lock.
bool native_event_idle(xal_bdevice_s* device, NativeEvent& native, bool wait);
// zeEventDestroy, then zeEventPoolDestroy when that succeeded; the result
// of zeEventDestroy. Nothing is reported. Thread-safe.
ze_result_t native_event_destroy(xal_bdevice_s* device, NativeEvent& native);
// Hands `native` to the device's retired events. Thread-safe.
void native_event_retire(xal_bdevice_s* device, std::shared_ptr<NativeEvent> native);
// Destroys the retired events of the devices of `device`'s driver (whose
// streams may wait on them) that the devices no longer use and no call
// holds (checked without waiting); keeps the others. Called by the event
// entries, stream_destroy and device_synchronize. Thread-safe; the caller
// holds no lock.
void reap_retired_events(xal_bdevice_s* device);

}  // namespace xal::levelzero
