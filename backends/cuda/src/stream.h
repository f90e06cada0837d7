// stream.h -- the common preamble and result of work queued on a stream
// (stream.cpp, copy.cpp).
#pragma once

#include "backend.h"

namespace xal::cuda {

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

inline xal_status_t done(xal_bstream_s* stream, CUresult r, const char* call) {
  return r == CUDA_SUCCESS ? XAL_SUCCESS
                           : stream->device->backend->fail(r, call,
                                                           stream->device);
}

// `s`, or once it is XAL_SUCCESS (the stream is done) a failure of queued
// work that the driver's stream cannot carry (backend.h, stream_failures),
// reported once.
inline xal_status_t with_queued_failure(xal_bstream_s* stream, xal_status_t s) {
  if (s != XAL_SUCCESS) return s;
  xal_backend_s* backend = stream->device->backend;
  std::string message;
  const xal_status_t failed = backend->stream_failures.take(stream, &message);
  return failed == XAL_SUCCESS ? failed : backend->error(failed, "cuda: " + message);
}

}  // namespace xal::cuda
