// stream.cpp -- streams and the copies and memsets queued on them. IPC
// memory of an exporter that has ended is refused (xalsupport/ipc_owners.h).
#include "backend.h"
#include "entries.h"
#include "host_funcs.h"
#include "release.h"

namespace xal::cuda {

namespace {

// The common preamble of work queued on a stream: the stream is of the
// current device generation, the device is healthy, its context current.
inline xal_status_t enter(xal_bstream_s* stream, const char* call) {
  xal_bdevice_s* device = stream->device;
  if (stream->generation != device->generation.load(std::memory_order_acquire))
    return stale_object(device->backend, "stream");
  if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
  const CUresult r = device->make_current();
  return r == CUDA_SUCCESS ? XAL_SUCCESS : device->backend->fail(r, call, device);
}

// Refuses memory opened from an IPC handle whose exporter has ended
// (xalsupport/ipc_owners.h): one atomic load while the device has none.
xal_status_t owner_check(const xal_bdevice_s* device, xal_devptr_t ptr, size_t bytes,
                         const char* what) {
  const std::string ended = device->ipc_owners.ended(ptr, bytes, what);
  if (ended.empty()) return XAL_SUCCESS;
  return device->backend->error(XAL_ERROR_INVALID_ARGUMENT, "cuda: " + ended);
}

inline xal_status_t done(xal_bstream_s* stream, CUresult r, const char* call) {
  return r == CUDA_SUCCESS ? XAL_SUCCESS
                           : stream->device->backend->fail(r, call,
                                                           stream->device);
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

namespace {

// Makes the stream's host function runner on its first host function
// (host_funcs_mutex held, the device's context current); remembers why
// there is none when it cannot be made.
void make_runner_once(xal_bstream_s* stream) {
  xal_backend_s* backend = stream->device->backend;
  if (stream->host_funcs_tried) return;
  stream->host_funcs_tried = true;
  if (!backend->host_func_threads) {
    stream->host_funcs_missing = "XAL_CUDA_HOST_FUNCS=driver";
    return;
  }
  const char* call = nullptr;
  CUresult r = CUDA_SUCCESS;
  stream->host_funcs = HostFuncRunner::create(stream->device, stream->stream, &call, &r);
  if (stream->host_funcs == nullptr) {
    const char* name = nullptr;
    if (backend->driver.cuGetErrorName == nullptr ||
        backend->driver.cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) {
      name = "?";
    }
    stream->host_funcs_missing = std::string(call) + ": " + name + " (" + std::to_string(r) + ")";
    backend->log(XAL_LOG_WARNING, "cuda: host functions go straight to the driver (" +
                                      stream->host_funcs_missing +
                                      "); those of different streams may then run one at a time");
  }
}

}  // namespace

xal_status_t stream_create(xal_bdevice_t* device, uint32_t flags,
                           xal_bstream_t** out_stream) {
  xal_backend_s* backend = device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
    auto stream = std::make_unique<xal_bstream_s>();
    stream->device = device;
    std::lock_guard<std::mutex> lock(device->objects_mutex);
    stream->generation = device->generation.load();
    CUresult r = device->make_current();
    const unsigned cu_flags =
        (flags & XAL_STREAM_NON_BLOCKING) != 0 ? CU_STREAM_NON_BLOCKING : 0;
    if (r == CUDA_SUCCESS) {
      r = backend->driver.cuStreamCreate(&stream->stream, cu_flags);
    }
    if (r != CUDA_SUCCESS) return backend->fail(r, "cuStreamCreate", device);
    xal_bstream_s* raw = stream.get();
    try {
      device->streams.emplace(raw, std::move(stream));
    } catch (...) {
      backend->driver.cuStreamDestroy(raw->stream);
      throw;
    }
    *out_stream = raw;
    return XAL_SUCCESS;
  });
}

// Waits for the stream's work and destroys it, without the device's lock
// (release.h: a host function queued on it may wait for a thread that
// calls the backend on this device, as the core's staged copies do). An
// imported stream (interop.cpp) is waited for and left to its owner. An
// error keeps it for a retry; a retry after a sticky error finds the device
// unhealthy and releases it. Thread-safe, but for two destroys of one
// stream.
xal_status_t stream_destroy(xal_bstream_t* stream) {
  xal_bdevice_s* device = stream->device;
  xal_backend_s* backend = device->backend;
  // The stream's node, destroyed by release_from, runs what the driver
  // never will (host_funcs.h).
  return guarded(backend, [&]() -> xal_status_t {
    return release_from(device, device->streams, stream, "cuda: unknown stream", [&] {
      const char* call = "cuStreamSynchronize";
      CUresult r = device->make_current();
      if (r == CUDA_SUCCESS) r = backend->driver.cuStreamSynchronize(stream->stream);
      if (r == CUDA_SUCCESS && stream->owned) {
        call = "cuStreamDestroy";
        r = backend->driver.cuStreamDestroy(stream->stream);
      }
      return r == CUDA_SUCCESS ? XAL_SUCCESS : backend->fail(r, call, device);
    });
  });
}

xal_status_t stream_synchronize(xal_bstream_t* stream) {
  return guarded(stream->device->backend, [&]() -> xal_status_t {
    if (xal_status_t s = enter(stream, "cuStreamSynchronize"); s != XAL_SUCCESS)
      return s;
    return done(stream,
                stream->device->backend->driver.cuStreamSynchronize(
                    stream->stream),
                "cuStreamSynchronize");
  });
}

xal_status_t stream_query(xal_bstream_t* stream) {
  return guarded(stream->device->backend, [&]() -> xal_status_t {
    if (xal_status_t s = enter(stream, "cuStreamQuery"); s != XAL_SUCCESS)
      return s;
    return done(stream,
                stream->device->backend->driver.cuStreamQuery(stream->stream),
                "cuStreamQuery");
  });
}

xal_status_t stream_enqueue_host_func(xal_bstream_t* stream,
                                      void (*fn)(void* user), void* user) {
  xal_backend_s* backend = stream->device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    if (backend->driver.cuLaunchHostFunc == nullptr) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: the driver has no cuLaunchHostFunc");
    }
    if (xal_status_t s = enter(stream, "cuLaunchHostFunc"); s != XAL_SUCCESS)
      return s;
    std::lock_guard<std::mutex> lock(stream->host_funcs_mutex);
    make_runner_once(stream);
    if (stream->host_funcs != nullptr) {
      const char* call = "cuLaunchHostFunc";
      const CUresult r = stream->host_funcs->enqueue(fn, user, &call);
      return done(stream, r, call);
    }
    if (stream->driver_host_funcs == nullptr) {
      stream->driver_host_funcs =
          std::make_unique<DriverHostFuncs>(backend->driver, stream->stream);
    }
    return done(stream, stream->driver_host_funcs->enqueue(fn, user),
                "cuLaunchHostFunc");
  });
}

xal_status_t stream_has_host_func_runner(xal_bstream_t* stream, std::string* out_missing) {
  xal_backend_s* backend = stream->device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    if (backend->driver.cuLaunchHostFunc == nullptr) {
      *out_missing = "the driver has no cuLaunchHostFunc";
      return XAL_ERROR_NOT_SUPPORTED;
    }
    if (xal_status_t s = enter(stream, "cuLaunchHostFunc"); s != XAL_SUCCESS) return s;
    std::lock_guard<std::mutex> lock(stream->host_funcs_mutex);
    make_runner_once(stream);
    if (stream->host_funcs != nullptr) return XAL_SUCCESS;
    *out_missing = stream->host_funcs_missing;
    return XAL_ERROR_NOT_SUPPORTED;
  });
}

xal_status_t memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst,
                         const void* src, size_t bytes) {
  return guarded(stream->device->backend, [&]() -> xal_status_t {
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
  return guarded(stream->device->backend, [&]() -> xal_status_t {
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
  return guarded(stream->device->backend, [&]() -> xal_status_t {
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
  return guarded(backend, [&]() -> xal_status_t {
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
  return guarded(stream->device->backend, [&]() -> xal_status_t {
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

xal_bstream_s::xal_bstream_s() = default;
xal_bstream_s::~xal_bstream_s() = default;
