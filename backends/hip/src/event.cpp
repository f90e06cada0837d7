// Events: hipEvent_t with timing unless XAL_EVENT_DISABLE_TIMING.
#include "entries.h"
#include "errors.h"
#include "release.h"

namespace xal::hip {
namespace {

xal_status_t enter_event(xal_bevent_s* event) {
  return enter(event->device, event->generation, "the event");
}

}  // namespace

xal_status_t event_create(xal_bdevice_t* device, uint32_t flags,
                          xal_bevent_t** out_event) {
  return guarded(Entry{}, "hip event_create", [&]() -> xal_status_t {
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    auto event = std::make_unique<xal_bevent_s>();
    event->device = device;
    event->timing = (flags & XAL_EVENT_DISABLE_TIMING) == 0;
    const unsigned int hip_flags =
        event->timing ? hipEventDefault : hipEventDisableTiming;
    if (xal_status_t s = check(device,
                               device->backend->api().hipEventCreateWithFlags(
                                   &event->handle, hip_flags),
                               "hipEventCreateWithFlags");
        s != XAL_SUCCESS) {
      return s;
    }
    std::lock_guard lock(device->mutex);
    *out_event = support::keep(device->events, std::move(event),
                               device->generation);
    return XAL_SUCCESS;
  });
}

xal_status_t event_destroy(xal_bevent_t* event) {
  return guarded(Entry{}, "hip event_destroy", [&]() -> xal_status_t {
    xal_bdevice_s* device = event->device;
    return release_object(
        device, device->events, event, "HIP event",
        [device](const xal_bevent_s& owned) -> xal_status_t {
          const HipApi& api = device->backend->api();
          if (xal_status_t s = check(device, select_device(api, device->ordinal),
                                     "hipSetDevice");
              s != XAL_SUCCESS) {
            return s;
          }
          return check(device, api.hipEventDestroy(owned.handle),
                       "hipEventDestroy");
        });
  });
}

xal_status_t event_record(xal_bevent_t* event, xal_bstream_t* stream) {
  return guarded(Entry{}, "hip event_record", [&]() -> xal_status_t {
    if (event->device != stream->device) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "event_record: the stream belongs to another device");
    }
    if (xal_status_t s = enter(stream->device, stream->generation, "the stream");
        s != XAL_SUCCESS) {
      return s;
    }
    if (xal_status_t s = enter_event(event); s != XAL_SUCCESS) return s;
    xal_status_t s = check(event->device,
                           event->device->backend->api().hipEventRecord(
                               event->handle, stream->handle),
                           "hipEventRecord");
    if (s == XAL_SUCCESS) event->recorded = true;
    return s;
  });
}

xal_status_t stream_wait_event(xal_bstream_t* stream, xal_bevent_t* event) {
  return guarded(Entry{}, "hip stream_wait_event", [&]() -> xal_status_t {
    if (xal_status_t s = enter_event(event); s != XAL_SUCCESS) return s;
    if (xal_status_t s = enter(stream->device, stream->generation, "the stream");
        s != XAL_SUCCESS) {
      return s;
    }
    return check(stream->device,
                 stream->device->backend->api().hipStreamWaitEvent(
                     stream->handle, event->handle, 0),
                 "hipStreamWaitEvent");
  });
}

xal_status_t event_synchronize(xal_bevent_t* event) {
  return guarded(Entry{}, "hip event_synchronize", [&]() -> xal_status_t {
    if (xal_status_t s = enter_event(event); s != XAL_SUCCESS) return s;
    return check(event->device,
                 event->device->backend->api().hipEventSynchronize(event->handle),
                 "hipEventSynchronize");
  });
}

xal_status_t event_query(xal_bevent_t* event) {
  return guarded(Entry{}, "hip event_query", [&]() -> xal_status_t {
    if (xal_status_t s = enter_event(event); s != XAL_SUCCESS) return s;
    return check(event->device,
                 event->device->backend->api().hipEventQuery(event->handle),
                 "hipEventQuery");
  });
}

xal_status_t event_elapsed_ms(xal_bevent_t* start, xal_bevent_t* end,
                              float* out_ms) {
  return guarded(Entry{}, "hip event_elapsed_ms", [&]() -> xal_status_t {
    if (!start->timing || !end->timing) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "event_elapsed_ms: an event was created with "
                    "XAL_EVENT_DISABLE_TIMING");
    }
    if (!start->recorded || !end->recorded) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "event_elapsed_ms: an event was never recorded");
    }
    if (xal_status_t s = enter_event(start); s != XAL_SUCCESS) return s;
    if (xal_status_t s = enter_event(end); s != XAL_SUCCESS) return s;
    return check(start->device,
                 start->device->backend->api().hipEventElapsedTime(
                     out_ms, start->handle, end->handle),
                 "hipEventElapsedTime");
  });
}

}  // namespace xal::hip
