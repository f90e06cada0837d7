// copy.cpp -- the copies and memsets queued on a stream, and peer access
// between devices. IPC memory of an exporter that has ended is refused
// (xalsupport/ipc_owners.h).
#include "backend.h"
#include "entries.h"
#include "stream.h"

namespace xal::cuda {

namespace {

// Refuses memory opened from an IPC handle whose exporter has ended
// (xalsupport/ipc_owners.h): one atomic load while the device has none.
xal_status_t owner_check(const xal_bdevice_s* device, xal_devptr_t ptr, size_t bytes,
                         const char* what) {
  const std::string ended = device->ipc_owners.ended(ptr, bytes, what);
  if (ended.empty()) return XAL_SUCCESS;
  return device->backend->error(XAL_ERROR_INVALID_ARGUMENT, "cuda: " + ended);
}

}  // namespace

// Enables access from `from` to `to` once, when the hardware allows it.
void peer_access_enable(xal_bdevice_s* from, xal_bdevice_s* to) {
  const DriverSymbols& d = from->backend->driver;
  if (d.cuDeviceCanAccessPeer == nullptr || d.cuCtxEnablePeerAccess == nullptr)
    return;
  std::lock_guard<std::mutex> lock(from->peer_mutex);
  int8_t& state = from->peer_state.at(to->index);
  if (state >= 0) return;
  int can = 0;
  state = 0;
  if (d.cuDeviceCanAccessPeer(&can, from->device, to->device) !=
          CUDA_SUCCESS ||
      can == 0) {
    return;
  }
  if (from->make_current() != CUDA_SUCCESS) return;
  const CUresult r = d.cuCtxEnablePeerAccess(to->context, 0);
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
    state = 1;
  } else {
    from->backend->log(XAL_LOG_WARNING,
                       "cuda: cuCtxEnablePeerAccess from device " +
                           std::to_string(from->index) + " to " +
                           std::to_string(to->index) + " failed with " +
                           std::to_string(r) + "; copies are staged");
  }
}

xal_status_t memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst,
                         const void* src, size_t bytes) {
  return guarded(Entry{stream->device->backend}, __func__, [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (xal_status_t s = owner_check(stream->device, dst, bytes, "memcpy_htod"); s != XAL_SUCCESS)
      return s;
    if (xal_status_t s = enter(stream, "cuMemcpyHtoDAsync"); s != XAL_SUCCESS)
      return s;
    return done(stream,
                stream->device->backend->driver.cuMemcpyHtoDAsync(
                    dst, src, bytes, stream->stream),
                "cuMemcpyHtoDAsync");
  });
}

xal_status_t memcpy_dtoh(xal_bstream_t* stream, void* dst, xal_devptr_t src,
                         size_t bytes) {
  return guarded(Entry{stream->device->backend}, __func__, [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (xal_status_t s = owner_check(stream->device, src, bytes, "memcpy_dtoh"); s != XAL_SUCCESS)
      return s;
    if (xal_status_t s = enter(stream, "cuMemcpyDtoHAsync"); s != XAL_SUCCESS)
      return s;
    return done(stream,
                stream->device->backend->driver.cuMemcpyDtoHAsync(
                    dst, src, bytes, stream->stream),
                "cuMemcpyDtoHAsync");
  });
}

xal_status_t memcpy_dtod(xal_bstream_t* stream, xal_devptr_t dst,
                         xal_devptr_t src, size_t bytes) {
  return guarded(Entry{stream->device->backend}, __func__, [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    for (const xal_devptr_t ptr : {dst, src}) {
      if (xal_status_t s = owner_check(stream->device, ptr, bytes, "memcpy_dtod"); s != XAL_SUCCESS)
        return s;
    }
    if (xal_status_t s = enter(stream, "cuMemcpyDtoDAsync"); s != XAL_SUCCESS)
      return s;
    return done(stream,
                stream->device->backend->driver.cuMemcpyDtoDAsync(
                    dst, src, bytes, stream->stream),
                "cuMemcpyDtoDAsync");
  });
}

namespace {

// A peer copy; `enable_access` first enables peer access both ways (not
// from a host function: enabling may synchronize the context).
xal_status_t copy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device,
                       xal_devptr_t dst, xal_bdevice_t* src_device,
                       xal_devptr_t src, size_t bytes, bool enable_access) {
  xal_backend_s* backend = stream->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (dst_device == src_device) return memcpy_dtod(stream, dst, src, bytes);
    if (backend->driver.cuMemcpyPeerAsync == nullptr) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: the driver has no cuMemcpyPeerAsync");
    }
    for (xal_bdevice_s* d : {dst_device, src_device}) {
      if (xal_status_t s = d->check_health(); s != XAL_SUCCESS) return s;
    }
    if (xal_status_t s = owner_check(dst_device, dst, bytes, "memcpy_peer"); s != XAL_SUCCESS)
      return s;
    if (xal_status_t s = owner_check(src_device, src, bytes, "memcpy_peer"); s != XAL_SUCCESS)
      return s;
    if (enable_access) {
      peer_access_enable(src_device, dst_device);
      peer_access_enable(dst_device, src_device);
    }
    if (xal_status_t s = enter(stream, "cuMemcpyPeerAsync"); s != XAL_SUCCESS)
      return s;
    return done(stream,
                backend->driver.cuMemcpyPeerAsync(
                    dst, dst_device->context, src, src_device->context, bytes,
                    stream->stream),
                "cuMemcpyPeerAsync");
  });
}

}  // namespace

xal_status_t memcpy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device,
                         xal_devptr_t dst, xal_bdevice_t* src_device,
                         xal_devptr_t src, size_t bytes) {
  return copy_peer(stream, dst_device, dst, src_device, src, bytes, true);
}

xal_status_t memcpy_peer_as_is(xal_bstream_t* stream, xal_bdevice_t* dst_device,
                               xal_devptr_t dst, xal_bdevice_t* src_device,
                               xal_devptr_t src, size_t bytes) {
  return copy_peer(stream, dst_device, dst, src_device, src, bytes, false);
}

xal_status_t memset(xal_bstream_t* stream, xal_devptr_t dst, uint8_t value,
                       size_t bytes) {
  return guarded(Entry{stream->device->backend}, __func__, [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (xal_status_t s = owner_check(stream->device, dst, bytes, "memset"); s != XAL_SUCCESS)
      return s;
    if (xal_status_t s = enter(stream, "cuMemsetD8Async"); s != XAL_SUCCESS)
      return s;
    return done(stream,
                stream->device->backend->driver.cuMemsetD8Async(
                    dst, value, bytes, stream->stream),
                "cuMemsetD8Async");
  });
}

}  // namespace xal::cuda
