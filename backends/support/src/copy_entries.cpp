#include "xalsupport/copy_entries.h"

#include <string>

#include "xalsupport/report.h"

namespace xal::support {

xal_status_t check_ipc_owner(const IpcOwners& owners, xal_devptr_t ptr, size_t bytes,
                             const char* what) {
  const std::string ended = owners.ended(ptr, bytes, what);
  if (ended.empty()) return XAL_SUCCESS;
  return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr, ended);
}

xal_status_t check_peer_copy(const PeerCopyChecks& checks, const xal_bdevice_s* stream_device,
                             xal_bdevice_s* dst_device, xal_devptr_t dst,
                             xal_bdevice_s* src_device, xal_devptr_t src, size_t bytes) {
  if (stream_device != dst_device && stream_device != src_device) {
    return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                  "memcpy_peer: the stream belongs to neither device");
  }
  if (xal_status_t s = checks.sticky_check(dst_device); s != XAL_SUCCESS) return s;
  if (xal_status_t s = checks.sticky_check(src_device); s != XAL_SUCCESS) return s;
  if (xal_status_t s = checks.owner_check(dst_device, dst, bytes, "memcpy_peer");
      s != XAL_SUCCESS) {
    return s;
  }
  return checks.owner_check(src_device, src, bytes, "memcpy_peer");
}

}  // namespace xal::support
