// What the copy entries of the HIP and Level Zero backends share: the
// refusal of IPC memory whose exporter has ended, and memcpy_peer's checks
// before any vendor call. Each backend keeps its vendor calls.
#pragma once

#include <cstddef>

#include "xal/xal_backend.h"
#include "xalsupport/ipc_owners.h"

namespace xal::support {

// XAL_SUCCESS, or XAL_ERROR_INVALID_ARGUMENT (reported through the plugin's
// services) when [ptr, ptr + bytes) is memory of `owners` whose exporter
// has ended (`what` names the operation). Thread-safe.
xal_status_t check_ipc_owner(const IpcOwners& owners, xal_devptr_t ptr, size_t bytes,
                             const char* what);

// A backend's per-device checks, as memcpy_peer runs them.
struct PeerCopyChecks {
  // XAL_SUCCESS, or the device's sticky error (reported again).
  xal_status_t (*sticky_check)(xal_bdevice_s* device);
  // check_ipc_owner() on the device's IPC memory.
  xal_status_t (*owner_check)(const xal_bdevice_s* device, xal_devptr_t ptr, size_t bytes,
                              const char* what);
};

// memcpy_peer's checks before any vendor call, in order: the stream's
// device is one of the two (else XAL_ERROR_INVALID_ARGUMENT, reported),
// neither device has a sticky error, neither range is IPC memory of an
// ended exporter. The first failure's status, else XAL_SUCCESS. The devices
// are the caller's; thread-safe as the checks are.
xal_status_t check_peer_copy(const PeerCopyChecks& checks, const xal_bdevice_s* stream_device,
                             xal_bdevice_s* dst_device, xal_devptr_t dst,
                             xal_bdevice_s* src_device, xal_devptr_t src, size_t bytes);

}  // namespace xal::support
