// Events: markers on a queue, with profiling timestamps for elapsed time.
#include "backend.h"
#include "entries.h"

#include <memory>

namespace xal::opencl {
namespace {

// The event's current marker, retained for use outside its lock (NULL if
// never recorded), and its context. The caller releases it.
cl_event current(xal_bevent_s& event, cl_context* context = nullptr) {
  std::lock_guard lock(event.mutex);
  if (event.event != nullptr) event.device->backend->api().clRetainEvent(event.event);
  if (context != nullptr) *context = event.context;
  return event.event;
}

cl_int execution_status(const ClApi& api, cl_event ev, cl_int& status) {
  return api.clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                            nullptr);
}

// A user event of one context that the completion of an event of another
// context opens. Touches only what it shares: the callback may run after
// shutdown (the waiting queue finishes as soon as the gate is set).
struct Bridge {
  std::shared_ptr<CallbackShared> shared;
  cl_event gate = nullptr;
};

// Opens the gate; owns and frees `data`, a Bridge.
void CL_CALLBACK open_gate(cl_event, cl_int, void* data) {
  std::unique_ptr<Bridge> bridge(static_cast<Bridge*>(data));
  const ClApi& api = bridge->shared->api;
  api.clSetUserEventStatus(bridge->gate, CL_COMPLETE);
  bridge->shared->releases.gate_set(api);
  api.clReleaseEvent(bridge->gate);
}

}  // namespace

void release_event(xal_bevent_s& event) {
  std::lock_guard lock(event.mutex);
  if (event.event != nullptr) event.device->backend->api().clReleaseEvent(event.event);
  event.event = nullptr;
}

xal_status_t event_create(xal_bdevice_t* device, uint32_t flags, xal_bevent_t** out) {
  return guarded(Entry{device->backend->services}, "event_create", [&]() -> xal_status_t {
    auto event = std::make_unique<xal_bevent_s>();
    event->device = device;
    event->flags = flags;
    *out = device->backend->events.add(std::move(event));
    return XAL_SUCCESS;
  });
}

xal_status_t event_destroy(xal_bevent_t* event) {
  xal_backend_s* b = event->device->backend;
  return guarded(Entry{b->services}, "event_destroy", [&]() -> xal_status_t {
    std::unique_ptr<xal_bevent_s> owned = b->events.remove(event);
    if (!owned) return report(b->services, XAL_ERROR_INVALID_HANDLE, "event_destroy: unknown event");
    release_event(*owned);
    return XAL_SUCCESS;
  });
}

xal_status_t event_record(xal_bevent_t* event, xal_bstream_t* stream) {
  const xal_backend_services_t* s = event->device->backend->services;
  return guarded(Entry{s}, "event_record", [&]() -> xal_status_t {
    const ClApi& api = event->device->backend->api();
    cl_event marker = nullptr;
    cl_int rc = submit(*stream, [&](cl_event* ev) {
      const cl_int r = api.clEnqueueMarkerWithWaitList(stream->queue, 0, nullptr, ev);
      if (r == CL_SUCCESS) {
        api.clRetainEvent(*ev);  // one reference for the stream, one for the event
        marker = *ev;
      }
      return r;
    });
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clEnqueueMarkerWithWaitList");
    {
      std::lock_guard lock(event->mutex);
      if (event->event != nullptr) api.clReleaseEvent(event->event);
      event->event = marker;
      event->context = stream->device->context;
    }
    rc = api.clFlush(stream->queue);
    return rc == CL_SUCCESS ? XAL_SUCCESS : report_cl(s, rc, "clFlush");
  });
}

xal_status_t stream_wait_event(xal_bstream_t* stream, xal_bevent_t* event) {
  const xal_backend_services_t* s = stream->device->backend->services;
  return guarded(Entry{s}, "stream_wait_event", [&]() -> xal_status_t {
    const ClApi& api = stream->device->backend->api();
    cl_context ev_context = nullptr;
    cl_event ev = current(*event, &ev_context);
    if (ev == nullptr) return XAL_SUCCESS;  // never recorded: nothing to wait for
    cl_int rc = CL_SUCCESS;
    if (ev_context == stream->device->context) {
      rc = submit(*stream, [&](cl_event* barrier) {
        return api.clEnqueueBarrierWithWaitList(stream->queue, 1, &ev, barrier);
      });
      api.clReleaseEvent(ev);
      if (rc != CL_SUCCESS) return report_cl(s, rc, "clEnqueueBarrierWithWaitList");
    } else {
      // Events of another context cannot be waited on directly: bridge
      // through a user event of this context that ev's completion opens.
      xal_backend_s& b = *stream->device->backend;
      DeferredReleases& releases = b.releases();
      auto bridge = std::make_unique<Bridge>(Bridge{b.shared, nullptr});
      cl_event gate = releases.create_gate(api, stream->device->context, &rc);
      if (rc != CL_SUCCESS) {
        api.clReleaseEvent(ev);
        return report_cl(s, rc, "clCreateUserEvent");
      }
      bridge->gate = gate;
      rc = submit(*stream, [&](cl_event* barrier) {
        return api.clEnqueueBarrierWithWaitList(stream->queue, 1, &gate, barrier);
      });
      if (rc == CL_SUCCESS) {
        rc = api.clSetEventCallback(ev, CL_COMPLETE, open_gate, bridge.get());
        if (rc == CL_SUCCESS) bridge.release();  // owned by the callback now
      }
      api.clReleaseEvent(ev);
      if (rc != CL_SUCCESS) {
        api.clSetUserEventStatus(gate, CL_COMPLETE);
        releases.gate_set(api);
        api.clReleaseEvent(gate);
        return report_cl(s, rc, "stream_wait_event");
      }
    }
    rc = api.clFlush(stream->queue);
    return rc == CL_SUCCESS ? XAL_SUCCESS : report_cl(s, rc, "clFlush");
  });
}

xal_status_t event_synchronize(xal_bevent_t* event) {
  const xal_backend_services_t* s = event->device->backend->services;
  return guarded(Entry{s}, "event_synchronize", [&]() -> xal_status_t {
    const ClApi& api = event->device->backend->api();
    cl_event ev = current(*event);
    if (ev == nullptr) return XAL_SUCCESS;
    const cl_int rc = api.clWaitForEvents(1, &ev);
    // The recorded work failed: report its own code rather than the wait's.
    const cl_int failed =
        rc == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST ? command_error(api, ev) : CL_SUCCESS;
    api.clReleaseEvent(ev);
    if (failed != CL_SUCCESS) {
      return report_cl(s, failed, "event_synchronize", "the recorded work failed");
    }
    return rc == CL_SUCCESS ? XAL_SUCCESS : report_cl(s, rc, "clWaitForEvents");
  });
}

xal_status_t event_query(xal_bevent_t* event) {
  const xal_backend_services_t* s = event->device->backend->services;
  return guarded(Entry{s}, "event_query", [&]() -> xal_status_t {
    const ClApi& api = event->device->backend->api();
    cl_event ev = current(*event);
    if (ev == nullptr) return XAL_SUCCESS;
    cl_int status = CL_QUEUED;
    const cl_int rc = execution_status(api, ev, status);
    api.clReleaseEvent(ev);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clGetEventInfo");
    if (status < 0) return report_cl(s, status, "event_query", "the recorded work failed");
    return status == CL_COMPLETE ? XAL_SUCCESS : XAL_NOT_READY;
  });
}

xal_status_t event_elapsed_ms(xal_bevent_t* start, xal_bevent_t* end, float* out_ms) {
  const xal_backend_services_t* s = start->device->backend->services;
  return guarded(Entry{s}, "event_elapsed_ms", [&]() -> xal_status_t {
    if (((start->flags | end->flags) & XAL_EVENT_DISABLE_TIMING) != 0) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    "event_elapsed_ms: an event was created with XAL_EVENT_DISABLE_TIMING");
    }
    if (!start->device->info.profiling || !end->device->info.profiling) {
      return report(s, XAL_ERROR_NOT_SUPPORTED,
                    "event_elapsed_ms: the device has no queue profiling");
    }
    const ClApi& api = start->device->backend->api();
    cl_event a = current(*start);
    cl_event b = current(*end);
    auto release = [&] {
      if (a != nullptr) api.clReleaseEvent(a);
      if (b != nullptr) api.clReleaseEvent(b);
    };
    if (a == nullptr || b == nullptr) {
      release();
      return report(s, XAL_ERROR_INVALID_ARGUMENT, "event_elapsed_ms: an event was never recorded");
    }
    cl_int sa = CL_QUEUED, sb = CL_QUEUED;
    cl_int rc = execution_status(api, a, sa);
    if (rc == CL_SUCCESS) rc = execution_status(api, b, sb);
    if (rc != CL_SUCCESS) {
      release();
      return report_cl(s, rc, "clGetEventInfo");
    }
    if (sa != CL_COMPLETE || sb != CL_COMPLETE) {
      release();
      if (sa < 0 || sb < 0) {
        return report_cl(s, sa < 0 ? sa : sb, "event_elapsed_ms", "the recorded work failed");
      }
      return XAL_NOT_READY;
    }
    cl_ulong ta = 0, tb = 0;
    rc = api.clGetEventProfilingInfo(a, CL_PROFILING_COMMAND_END, sizeof(ta), &ta, nullptr);
    if (rc == CL_SUCCESS) {
      rc = api.clGetEventProfilingInfo(b, CL_PROFILING_COMMAND_END, sizeof(tb), &tb, nullptr);
    }
    release();
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clGetEventProfilingInfo");
    const double ns = static_cast<double>(tb) - static_cast<double>(ta);
    *out_ms = static_cast<float>(ns / 1e6);
    return XAL_SUCCESS;
  });
}

}  // namespace xal::opencl
