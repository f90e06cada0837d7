// Events, and waits between streams and events of any two devices.
#include "error.hpp"
#include "peer_copy.hpp"
#include "runtime.hpp"

using namespace xal::core;

extern "C" {

// Creates an event owned by the caller. Thread-safe.
XAL_API xal_status_t xal_event_create(xal_device_t device, uint32_t flags,
                                      xal_event_t* out_event) {
  return entry("xal_event_create", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (!out_event) return null_argument("out_event");
    if (flags & ~XAL_EVENT_DISABLE_TIMING)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("unknown event flags ", hex(flags)));
    xal_bevent_t* native = nullptr;
    const xal_status_t s = d->hdr.table->event_create(d->native, flags, &native);
    if (s != XAL_SUCCESS) return fail_backend(d->backend, d, s);
    EventObj* obj = nullptr;
    try {
      obj = make_handle<EventObj>(d->hdr.table);
      obj->device = d;
      obj->native = native;
      std::lock_guard lock(d->state->mu);
      d->state->events.insert(obj);
    } catch (...) {
      if (obj) destroy_handle(obj);
      d->hdr.table->event_destroy(native);
      throw;
    }
    *out_event = to_handle<xal_event_t>(obj);
    trace::note_device(d->index);
    return XAL_SUCCESS;
  });
}

XAL_API xal_status_t xal_event_destroy(xal_event_t event) {
  return entry("xal_event_destroy", [&] {
    EventObj* e = as_event(event);
    if (!e) return bad_handle(event, "event");
    DeviceObj* d = e->device;
    {
      std::lock_guard lock(d->state->mu);
      if (d->state->events.erase(e) == 0) return bad_handle(event, "event");
    }
    const xal_status_t st = destroy_native_event(e);
    if (st != XAL_SUCCESS) {  // the backend keeps it: so does the handle, for a retry
      std::lock_guard lock(d->state->mu);
      d->state->events.insert(e);
      return fail_backend(d->backend, d, st);
    }
    destroy_handle(e);
    return XAL_SUCCESS;
  });
}

XAL_API xal_status_t xal_event_record(xal_event_t event, xal_stream_t stream) {
  return entry("xal_event_record", [&] {
    EventObj* e = as_event(event);
    if (!e) return bad_handle(event, "event");
    StreamObj* s = as_stream(stream);
    if (!s) return bad_handle(stream, "stream");
    if (s->device != e->device)
      return fail(e->device, XAL_ERROR_INVALID_ARGUMENT,
                  cat("event of device ", e->device->index,
                      " cannot be recorded on a stream of device ",
                      s->device->index));
    const xal_status_t st = e->hdr.table->event_record(e->native, s->native);
    if (st != XAL_SUCCESS) return fail_backend(e->device->backend, e->device, st);
    if (trace_on()) trace::device_op(s, "event_record", {});
    return st;
  });
}

XAL_API xal_status_t xal_stream_wait_event(xal_stream_t stream,
                                           xal_event_t event) {
  return entry("xal_stream_wait_event", [&] {
    StreamObj* s = as_stream(stream);
    if (!s) return bad_handle(stream, "stream");
    EventObj* e = as_event(event);
    if (!e) return bad_handle(event, "event");
    const trace::OpArgs args{.peer = static_cast<int64_t>(e->device->index)};
    if (s->device->backend == e->device->backend) {
      const xal_status_t st = s->hdr.table->stream_wait_event(s->native, e->native);
      if (st != XAL_SUCCESS) return fail_backend(s->device->backend, s->device, st);
      if (trace_on()) trace::device_op(s, "wait_event", args);
      return st;
    }
    const xal_status_t st = cross_backend_wait(s, e);
    if (st == XAL_SUCCESS && trace_on()) trace::device_op(s, "wait_event (cross-backend)", args);
    return st;
  });
}

XAL_API xal_status_t xal_event_synchronize(xal_event_t event) {
  return entry("xal_event_synchronize", [&] {
    EventObj* e = as_event(event);
    if (!e) return bad_handle(event, "event");
    trace::note_device(e->device->index);
    const xal_status_t st = e->hdr.table->event_synchronize(e->native);
    return st == XAL_SUCCESS ? st : fail_backend(e->device->backend, e->device, st);
  });
}

XAL_API xal_status_t xal_event_query(xal_event_t event) {
  return entry("xal_event_query", [&] {
    EventObj* e = as_event(event);
    if (!e) return bad_handle(event, "event");
    const xal_status_t st = e->hdr.table->event_query(e->native);
    return st >= 0 ? st : fail_backend(e->device->backend, e->device, st);
  });
}

XAL_API xal_status_t xal_event_elapsed_ms(xal_event_t start, xal_event_t end,
                                          float* out_ms) {
  return entry("xal_event_elapsed_ms", [&] {
    EventObj* a = as_event(start);
    if (!a) return bad_handle(start, "start");
    EventObj* b = as_event(end);
    if (!b) return bad_handle(end, "end");
    if (!out_ms) return null_argument("out_ms");
    if (a->device != b->device)
      return fail(a->device, XAL_ERROR_INVALID_ARGUMENT,
                  cat("events of devices ", a->device->index, " and ",
                      b->device->index, " cannot be timed against each other"));
    const xal_status_t st = a->hdr.table->event_elapsed_ms(a->native, b->native, out_ms);
    return st == XAL_SUCCESS ? st : fail_backend(a->device->backend, a->device, st);
  });
}

}  // extern "C"
