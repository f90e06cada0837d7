// event.cpp -- events: record, wait, query, timing.
#include "backend.h"
#include "entries.h"
#include "release.h"

namespace xal::cuda {

namespace {

inline xal_status_t enter_event(xal_bevent_s* event, const char* call) {
  xal_bdevice_s* device = event->device;
  if (event->generation != device->generation.load(std::memory_order_acquire))
    return stale_object(device->backend, "event");
  if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
  const CUresult r = device->make_current();
  return r == CUDA_SUCCESS ? XAL_SUCCESS : device->backend->fail(r, call, device);
}

inline xal_status_t result(xal_bdevice_s* device, CUresult r,
                           const char* call) {
  return r == CUDA_SUCCESS ? XAL_SUCCESS : device->backend->fail(r, call, device);
}

}  // namespace

xal_status_t event_create(xal_bdevice_t* device, uint32_t flags,
                          xal_bevent_t** out_event) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
    auto event = std::make_unique<xal_bevent_s>();
    event->device = device;
    event->timing = (flags & XAL_EVENT_DISABLE_TIMING) == 0;
    std::lock_guard<std::mutex> lock(device->objects_mutex);
    event->generation = device->generation.load();
    CUresult r = device->make_current();
    if (r == CUDA_SUCCESS) {
      r = backend->driver.cuEventCreate(
          &event->event, event->timing ? CU_EVENT_DEFAULT
                                       : CU_EVENT_DISABLE_TIMING);
    }
    if (r != CUDA_SUCCESS) return backend->fail(r, "cuEventCreate", device);
    xal_bevent_s* raw = event.get();
    try {
      device->events.emplace(raw, std::move(event));
    } catch (...) {
      backend->driver.cuEventDestroy(raw->event);
      throw;
    }
    *out_event = raw;
    return XAL_SUCCESS;
  });
}

// As stream_destroy (release.h): the driver call runs without the device's
// lock (a driver may wait there for the event's last record, behind a host
// function that waits for a thread calling the backend on this device), and
// an error keeps the event for a retry. Thread-safe, but for two destroys of
// one event.
xal_status_t event_destroy(xal_bevent_t* event) {
  xal_bdevice_s* device = event->device;
  return guarded(Entry{device->backend}, __func__, [&]() -> xal_status_t {
    return release_from(device, device->events, event, "cuda: unknown event", [&] {
      CUresult r = device->make_current();
      if (r == CUDA_SUCCESS) r = device->backend->driver.cuEventDestroy(event->event);
      return result(device, r, "cuEventDestroy");
    });
  });
}

xal_status_t event_record(xal_bevent_t* event, xal_bstream_t* stream) {
  xal_backend_s* backend = event->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (stream->device != event->device) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: an event is recorded on a stream of its "
                            "own device");
    }
    if (stream->generation != stream->device->generation.load())
      return stale_object(backend, "stream");
    if (xal_status_t s = enter_event(event, "cuEventRecord"); s != XAL_SUCCESS)
      return s;
    return result(event->device,
                  backend->driver.cuEventRecord(event->event, stream->stream),
                  "cuEventRecord");
  });
}

xal_status_t stream_wait_event(xal_bstream_t* stream, xal_bevent_t* event) {
  xal_backend_s* backend = stream->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (event->generation != event->device->generation.load())
      return stale_object(backend, "event");
    if (stream->generation != stream->device->generation.load())
      return stale_object(backend, "stream");
    xal_bdevice_s* device = stream->device;
    if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
    CUresult r = device->make_current();
    if (r == CUDA_SUCCESS) {
      r = backend->driver.cuStreamWaitEvent(stream->stream, event->event, 0);
    }
    return result(device, r, "cuStreamWaitEvent");
  });
}

xal_status_t event_synchronize(xal_bevent_t* event) {
  return guarded(Entry{event->device->backend}, __func__, [&]() -> xal_status_t {
    if (xal_status_t s = enter_event(event, "cuEventSynchronize");
        s != XAL_SUCCESS)
      return s;
    return result(event->device,
                  event->device->backend->driver.cuEventSynchronize(event->event),
                  "cuEventSynchronize");
  });
}

xal_status_t event_query(xal_bevent_t* event) {
  return guarded(Entry{event->device->backend}, __func__, [&]() -> xal_status_t {
    if (xal_status_t s = enter_event(event, "cuEventQuery"); s != XAL_SUCCESS)
      return s;
    return result(event->device,
                  event->device->backend->driver.cuEventQuery(event->event),
                  "cuEventQuery");
  });
}

xal_status_t event_elapsed_ms(xal_bevent_t* start, xal_bevent_t* end,
                              float* out_ms) {
  xal_backend_s* backend = start->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (!start->timing || !end->timing) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: an event created with "
                            "XAL_EVENT_DISABLE_TIMING has no timestamp");
    }
    if (start->device != end->device) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: elapsed time needs two events of one device");
    }
    if (end->generation != end->device->generation.load())
      return stale_object(backend, "event");
    if (xal_status_t s = enter_event(start, "cuEventElapsedTime");
        s != XAL_SUCCESS)
      return s;
    float ms = 0.0f;
    const CUresult r =
        backend->driver.cuEventElapsedTime(&ms, start->event, end->event);
    if (r != CUDA_SUCCESS) return result(start->device, r, "cuEventElapsedTime");
    *out_ms = ms;
    return XAL_SUCCESS;
  });
}

}  // namespace xal::cuda
