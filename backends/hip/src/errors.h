// Error reporting shared by every entry of the HIP backend.
#pragma once

#include <string>

#include "backend.h"
#include "xalsupport/guarded.h"
#include "xalsupport/report.h"

namespace xal::hip {

// set_services (at init), report (detail through services->set_error) and
// guarded (the entries' exception barrier) are shared by the vendor
// backends: backends/support.
using support::report;
using support::set_services;

// The calling thread's HIP device before its outermost entry selected
// another (select_device): set again when that entry returns, so that a
// caller that also uses the HIP runtime on the thread keeps its device.
struct DeviceRestore {
  int depth = 0;
  bool changed = false;
  int previous = 0;
  hipError_t (*set)(int) = nullptr;
};
inline thread_local DeviceRestore t_device_restore;

// Counts the entries of the thread; the outermost gives the device back.
class EntryScope {
 public:
  EntryScope() { ++t_device_restore.depth; }
  ~EntryScope() {
    DeviceRestore& r = t_device_restore;
    if (--r.depth > 0 || !r.changed) return;
    r.changed = false;
    (void)r.set(r.previous);
  }
  EntryScope(const EntryScope&) = delete;
  EntryScope& operator=(const EntryScope&) = delete;
};

// The HIP entry context for the shared exception barrier
// (support::guarded(Entry{}, operation, body)): reports "<operation>:
// <cause>" through the plugin's services (support::ReportedEntry) and, for
// the whole call, gives the thread's device back (EntryScope). Thread-safe.
struct Entry : support::ReportedEntry {
  EntryScope scope;
};
using support::guarded;

// hipSetDevice(ordinal) on the calling thread, remembering the device it
// replaces for the outermost entry to set again. Thread-safe.
hipError_t select_device(const HipApi& api, int ordinal);

// Maps a HIP result of `what` on `device` (may be null) to a status; on an
// error records detail, and on a sticky code marks the device. Thread-safe.
xal_status_t check(xal_bdevice_s* device, hipError_t result, const char* what);

// XAL_SUCCESS, or the device's sticky error (reported again). Thread-safe.
xal_status_t sticky_check(xal_bdevice_s* device);

// sticky_check, then hipSetDevice(ordinal) on the calling thread.
xal_status_t enter(xal_bdevice_s* device);

// enter() for an object of `generation`; an object that a device reset
// invalidated gives XAL_ERROR_INVALID_HANDLE.
xal_status_t enter(xal_bdevice_s* device, uint64_t generation,
                   const char* what);

}  // namespace xal::hip
