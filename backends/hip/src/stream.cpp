// Streams: hipStream_t, in order, one per xal stream (or the caller's own,
// adopted by stream_import in interop.cpp).
#include "entries.h"
#include "errors.h"
#include "release.h"

namespace xal::hip {
namespace {

// `s`, or once it is XAL_SUCCESS (the stream is done) a failure of queued
// work that the runtime's stream cannot carry (backend.h,
// stream_failures), reported once.
xal_status_t with_queued_failure(xal_bstream_s* stream, xal_status_t s) {
  if (s != XAL_SUCCESS) return s;
  std::string message;
  const xal_status_t failed = stream->device->backend->stream_failures.take(stream, &message);
  return failed == XAL_SUCCESS ? failed : report(failed, 0, nullptr, message);
}

}  // namespace

xal_status_t stream_create(xal_bdevice_t* device, uint32_t flags,
                           xal_bstream_t** out_stream) {
  return guarded(Entry{}, "hip stream_create", [&]() -> xal_status_t {
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    auto stream = std::make_unique<xal_bstream_s>();
    stream->device = device;
    const unsigned int hip_flags = (flags & XAL_STREAM_NON_BLOCKING) != 0
                                       ? hipStreamNonBlocking
                                       : hipStreamDefault;
    if (xal_status_t s = check(device,
                               device->backend->api().hipStreamCreateWithFlags(
                                   &stream->handle, hip_flags),
                               "hipStreamCreateWithFlags");
        s != XAL_SUCCESS) {
      return s;
    }
    std::lock_guard lock(device->mutex);
    *out_stream = support::keep(device->streams, std::move(stream),
                                device->generation);
    return XAL_SUCCESS;
  });
}

xal_status_t stream_destroy(xal_bstream_t* stream) {
  return guarded(Entry{}, "hip stream_destroy", [&]() -> xal_status_t {
    xal_bdevice_s* device = stream->device;
    device->backend->stream_failures.forget(stream);
    return release_object(
        device, device->streams, stream, "HIP stream",
        [device](const xal_bstream_s& owned) -> xal_status_t {
          const HipApi& api = device->backend->api();
          if (xal_status_t s = check(device, select_device(api, device->ordinal),
                                     "hipSetDevice");
              s != XAL_SUCCESS) {
            return s;
          }
          // Work still queued finishes first, as xal_stream_destroy promises.
          if (xal_status_t s = check(device, api.hipStreamSynchronize(owned.handle),
                                     "hipStreamSynchronize");
              s != XAL_SUCCESS) {
            return s;
          }
          // An imported stream stays its owner's.
          if (owned.imported) return XAL_SUCCESS;
          return check(device, api.hipStreamDestroy(owned.handle),
                       "hipStreamDestroy");
        });
  });
}

xal_status_t stream_synchronize(xal_bstream_t* stream) {
  return guarded(Entry{}, "hip stream_synchronize", [&]() -> xal_status_t {
    xal_bdevice_s* device = stream->device;
    if (xal_status_t s = enter(device, stream->generation, "the stream");
        s != XAL_SUCCESS) {
      return s;
    }
    return with_queued_failure(
        stream, check(device, device->backend->api().hipStreamSynchronize(stream->handle),
                      "hipStreamSynchronize"));
  });
}

xal_status_t stream_query(xal_bstream_t* stream) {
  return guarded(Entry{}, "hip stream_query", [&]() -> xal_status_t {
    xal_bdevice_s* device = stream->device;
    if (xal_status_t s = enter(device, stream->generation, "the stream");
        s != XAL_SUCCESS) {
      return s;
    }
    return with_queued_failure(
        stream, check(device, device->backend->api().hipStreamQuery(stream->handle),
                      "hipStreamQuery"));
  });
}

xal_status_t stream_enqueue_host_func(xal_bstream_t* stream,
                                      void (*fn)(void* user), void* user) {
  return guarded(Entry{}, "hip stream_enqueue_host_func", [&]() -> xal_status_t {
    xal_bdevice_s* device = stream->device;
    const HipApi& api = device->backend->api();
    if (api.hipLaunchHostFunc == nullptr) {
      return report(XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                    "the HIP runtime lacks hipLaunchHostFunc");
    }
    if (xal_status_t s = enter(device, stream->generation, "the stream");
        s != XAL_SUCCESS) {
      return s;
    }
    return check(device, api.hipLaunchHostFunc(stream->handle, fn, user),
                 "hipLaunchHostFunc");
  });
}

}  // namespace xal::hip
