// Streams.
#include "error.hpp"
#include "partition.hpp"
#include "runtime.hpp"
#include "stream_failures.hpp"

using namespace xal::core;

namespace {

// After the backend says the stream's work is done: the failure of work the
// core ran in it (a collective's host step), if any, else XAL_SUCCESS.
xal_status_t core_work_status(StreamObj* s) {
  std::string message;
  const xal_status_t failed = take_stream_failure(s->native, &message);
  return failed == XAL_SUCCESS ? failed : fail(s->device, failed, message);
}

}  // namespace

namespace xal::core {

xal_stream_t publish_stream(DeviceObj* d, xal_bstream_t* native) {
  StreamObj* obj = nullptr;
  try {
    obj = make_handle<StreamObj>(d->hdr.table);
    obj->device = d;
    obj->native = native;
    std::lock_guard lock(d->state->mu);
    d->state->streams.insert(obj);
  } catch (...) {
    if (obj) destroy_handle(obj);
    d->hdr.table->stream_destroy(native);
    throw;
  }
  if (trace_on()) trace::stream_created(obj);
  return to_handle<xal_stream_t>(obj);
}

}  // namespace xal::core

extern "C" {

// Creates a stream owned by the caller. Thread-safe.
XAL_API xal_status_t xal_stream_create(xal_device_t device, uint32_t flags,
                                       xal_stream_t* out_stream) {
  return entry("xal_stream_create", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (!out_stream) return null_argument("out_stream");
    if (flags & ~XAL_STREAM_NON_BLOCKING)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("unknown stream flags ", hex(flags)));
    if (xal_status_t r = refuse_if_partitioned(d, "create streams"); r) return r;
    xal_bstream_t* native = nullptr;
    const xal_status_t s = d->hdr.table->stream_create(d->native, flags, &native);
    if (s != XAL_SUCCESS) return fail_backend(d->backend, d, s);
    *out_stream = publish_stream(d, native);
    return XAL_SUCCESS;
  });
}

// Waits for the stream's work and releases it. Thread-safe.
XAL_API xal_status_t xal_stream_destroy(xal_stream_t stream) {
  return entry("xal_stream_destroy", [&] {
    StreamObj* s = as_stream(stream);
    if (!s) return bad_handle(stream, "stream");
    DeviceObj* d = s->device;
    {
      std::lock_guard lock(d->state->mu);
      if (d->state->streams.erase(s) == 0) return bad_handle(stream, "stream");
    }
    const xal_status_t st = d->hdr.table->stream_destroy(s->native);
    if (st != XAL_SUCCESS) {  // the backend keeps it: so does the handle, for a retry
      std::lock_guard lock(d->state->mu);
      d->state->streams.insert(s);
      return fail_backend(d->backend, d, st);
    }
    if (trace_on()) trace::stream_destroyed(s);
    forget_stream_failure(s->native);
    destroy_handle(s);
    return XAL_SUCCESS;
  });
}

XAL_API xal_status_t xal_stream_synchronize(xal_stream_t stream) {
  return entry("xal_stream_synchronize", [&] {
    StreamObj* s = as_stream(stream);
    if (!s) return bad_handle(stream, "stream");
    if (trace_on()) trace::note_stream(s);
    const xal_status_t st = s->hdr.table->stream_synchronize(s->native);
    if (st != XAL_SUCCESS) return fail_backend(s->device->backend, s->device, st);
    return core_work_status(s);
  });
}

XAL_API xal_status_t xal_stream_query(xal_stream_t stream) {
  return entry("xal_stream_query", [&] {
    StreamObj* s = as_stream(stream);
    if (!s) return bad_handle(stream, "stream");
    const xal_status_t st = s->hdr.table->stream_query(s->native);
    if (st < 0) return fail_backend(s->device->backend, s->device, st);
    return st == XAL_SUCCESS ? core_work_status(s) : st;
  });
}

}  // extern "C"
