// Copies, memset and peer copies, all asynchronous on a hipStream_t. IPC
// memory of an exporter that has ended is refused (xalsupport/ipc_owners.h).
#include "entries.h"
#include "errors.h"
#include "xalsupport/copy_entries.h"

namespace xal::hip {
namespace {

void* as_pointer(xal_devptr_t address) {
  return reinterpret_cast<void*>(address);
}

xal_status_t enter_stream(xal_bstream_s* stream) {
  return enter(stream->device, stream->generation, "the stream");
}

// Refuses IPC memory whose exporter has ended (xalsupport/ipc_owners.h).
xal_status_t owner_check(const xal_bdevice_s* device, xal_devptr_t ptr,
                         size_t bytes, const char* what) {
  return support::check_ipc_owner(device->ipc_owners, ptr, bytes, what);
}

// Enables peer access from `from` to `to` once per pair, where supported.
// Without it hipMemcpyPeerAsync still works, staged by the runtime.
void enable_peer_access(xal_backend_s* backend, int from, int to) {
  const HipApi& api = backend->api();
  if (api.hipDeviceCanAccessPeer == nullptr ||
      api.hipDeviceEnablePeerAccess == nullptr) {
    return;
  }
  std::lock_guard lock(backend->peer_mutex);
  if (!backend->peers_enabled.insert({from, to}).second) return;
  int can = 0;
  if (api.hipDeviceCanAccessPeer(&can, from, to) == hipSuccess && can != 0) {
    (void)select_device(api, from);
    (void)api.hipDeviceEnablePeerAccess(to, 0);  // "already enabled" is fine
  }
}

}  // namespace

xal_status_t memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst,
                         const void* src, size_t bytes) {
  return guarded(Entry{}, "hip memcpy_htod", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (xal_status_t s = owner_check(stream->device, dst, bytes, "memcpy_htod");
        s != XAL_SUCCESS) {
      return s;
    }
    if (xal_status_t s = enter_stream(stream); s != XAL_SUCCESS) return s;
    return check(stream->device,
                 stream->device->backend->api().hipMemcpyHtoDAsync(
                     as_pointer(dst), const_cast<void*>(src), bytes,
                     stream->handle),
                 "hipMemcpyHtoDAsync");
  });
}

xal_status_t memcpy_dtoh(xal_bstream_t* stream, void* dst, xal_devptr_t src,
                         size_t bytes) {
  return guarded(Entry{}, "hip memcpy_dtoh", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (xal_status_t s = owner_check(stream->device, src, bytes, "memcpy_dtoh");
        s != XAL_SUCCESS) {
      return s;
    }
    if (xal_status_t s = enter_stream(stream); s != XAL_SUCCESS) return s;
    return check(stream->device,
                 stream->device->backend->api().hipMemcpyDtoHAsync(
                     dst, as_pointer(src), bytes, stream->handle),
                 "hipMemcpyDtoHAsync");
  });
}

xal_status_t memcpy_dtod(xal_bstream_t* stream, xal_devptr_t dst,
                         xal_devptr_t src, size_t bytes) {
  return guarded(Entry{}, "hip memcpy_dtod", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    for (xal_devptr_t ptr : {dst, src}) {
      if (xal_status_t s = owner_check(stream->device, ptr, bytes, "memcpy_dtod");
          s != XAL_SUCCESS) {
        return s;
      }
    }
    if (xal_status_t s = enter_stream(stream); s != XAL_SUCCESS) return s;
    return check(stream->device,
                 stream->device->backend->api().hipMemcpyDtoDAsync(
                     as_pointer(dst), as_pointer(src), bytes, stream->handle),
                 "hipMemcpyDtoDAsync");
  });
}

xal_status_t memcpy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device,
                         xal_devptr_t dst, xal_bdevice_t* src_device,
                         xal_devptr_t src, size_t bytes) {
  return guarded(Entry{}, "hip memcpy_peer", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (xal_status_t s = support::check_peer_copy({sticky_check, owner_check}, stream->device,
                                                  dst_device, dst, src_device, src, bytes);
        s != XAL_SUCCESS) {
      return s;
    }
    xal_backend_s* backend = stream->device->backend;
    const HipApi& api = backend->api();
    if (dst_device != src_device) {
      enable_peer_access(backend, stream->device->ordinal,
                         (stream->device == dst_device ? src_device : dst_device)
                             ->ordinal);
    }
    if (xal_status_t s = enter_stream(stream); s != XAL_SUCCESS) return s;
    if (api.hipMemcpyPeerAsync == nullptr) {
      // Unified addressing: a device-to-device copy reaches any device.
      return check(stream->device,
                   api.hipMemcpyDtoDAsync(as_pointer(dst), as_pointer(src),
                                          bytes, stream->handle),
                   "hipMemcpyDtoDAsync");
    }
    return check(stream->device,
                 api.hipMemcpyPeerAsync(as_pointer(dst), dst_device->ordinal,
                                        as_pointer(src), src_device->ordinal,
                                        bytes, stream->handle),
                 "hipMemcpyPeerAsync");
  });
}

xal_status_t memset(xal_bstream_t* stream, xal_devptr_t dst, uint8_t value,
                       size_t bytes) {
  return guarded(Entry{}, "hip memset", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (xal_status_t s = owner_check(stream->device, dst, bytes, "memset"); s != XAL_SUCCESS) {
      return s;
    }
    if (xal_status_t s = enter_stream(stream); s != XAL_SUCCESS) return s;
    return check(stream->device,
                 stream->device->backend->api().hipMemsetD8Async(
                     as_pointer(dst), value, bytes, stream->handle),
                 "hipMemsetD8Async");
  });
}

}  // namespace xal::hip
