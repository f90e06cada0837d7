// stream.cpp -- streams: create, destroy, synchronize, query, host
// functions. The copies and memsets queued on them are in copy.cpp.
#include "backend.h"
#include "entries.h"
#include "host_funcs.h"
#include "release.h"
#include "stream.h"

namespace xal::cuda {

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
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
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
  backend->stream_failures.forget(stream);
  // The stream's node, destroyed by release_from, runs what the driver
  // never will (host_funcs.h).
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
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
  return guarded(Entry{stream->device->backend}, __func__, [&]() -> xal_status_t {
    if (xal_status_t s = enter(stream, "cuStreamSynchronize"); s != XAL_SUCCESS)
      return s;
    return with_queued_failure(
        stream, done(stream, stream->device->backend->driver.cuStreamSynchronize(stream->stream),
                     "cuStreamSynchronize"));
  });
}

xal_status_t stream_query(xal_bstream_t* stream) {
  return guarded(Entry{stream->device->backend}, __func__, [&]() -> xal_status_t {
    if (xal_status_t s = enter(stream, "cuStreamQuery"); s != XAL_SUCCESS)
      return s;
    return with_queued_failure(
        stream, done(stream, stream->device->backend->driver.cuStreamQuery(stream->stream),
                     "cuStreamQuery"));
  });
}

xal_status_t stream_enqueue_host_func(xal_bstream_t* stream,
                                      void (*fn)(void* user), void* user) {
  xal_backend_s* backend = stream->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
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
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
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

}  // namespace xal::cuda

xal_bstream_s::xal_bstream_s() = default;
xal_bstream_s::~xal_bstream_s() = default;
