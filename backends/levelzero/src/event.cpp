// Events: one native event per pool; pools carry
// ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP unless XAL_EVENT_DISABLE_TIMING, and
// elapsed time comes from zeEventQueryKernelTimestamp. Recording appends a
// barrier that signals the native event; a native event the device may
// still use is never reset or destroyed but retired (native_events.cpp).
#include "entries.h"
#include "errors.h"

namespace xal::levelzero {
namespace {

xal_status_t enter_event(xal_bevent_t* event) {
  return enter(event->device, event->generation, "the event");
}

// Device ticks of a kernel timestamp, masked to the valid bits.
uint64_t ticks(uint64_t value, uint32_t valid_bits) {
  return valid_bits >= 64 ? value : value & ((uint64_t{1} << valid_bits) - 1);
}

// Waits on the host for the record of `native` (an event of `device`),
// within the backend's timeout (XAL_ERROR_TIMEOUT past it). Thread-safe.
xal_status_t host_wait(xal_bdevice_s* device, const NativeEvent& native) {
  const ze_result_t r = device->backend->api().zeEventHostSynchronize(
      native.handle, device->backend->sync_timeout_ns);
  if (r == ZE_RESULT_NOT_READY) {
    return report(XAL_ERROR_TIMEOUT, r, "ZE_RESULT_NOT_READY",
                  "event did not complete within XAL_LEVELZERO_SYNC_TIMEOUT_MS");
  }
  return check(device, r, "zeEventHostSynchronize");
}

}  // namespace

xal_status_t event_create(xal_bdevice_t* device, uint32_t flags,
                          xal_bevent_t** out_event) {
  return guarded("levelzero event_create", [&]() -> xal_status_t {
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    reap_retired_events(device);
    auto event = std::make_unique<xal_bevent_s>();
    event->device = device;
    event->timing = (flags & XAL_EVENT_DISABLE_TIMING) == 0;
    if (xal_status_t s = native_event_create(device, event->timing, &event->native);
        s != XAL_SUCCESS) {
      return s;
    }
    std::lock_guard lock(device->mutex);
    *out_event = support::keep(device->events, std::move(event),
                               device->generation);
    return XAL_SUCCESS;
  });
}

// Releases the event. Its native event is destroyed now when the device no
// longer uses it, else retired until then (the destroy succeeds). When the
// driver refuses to destroy it now, the event is kept (and still owned by
// its device) and the error returned, so that the destroy can be tried
// again. Thread-safe.
xal_status_t event_destroy(xal_bevent_t* event) {
  return guarded("levelzero event_destroy", [&]() -> xal_status_t {
    xal_bdevice_s* device = event->device;
    std::unique_ptr<xal_bevent_s> owned;
    {
      std::lock_guard lock(device->mutex);
      owned = support::take(device->events, event);
      if (owned == nullptr) {
        return report(XAL_ERROR_INVALID_HANDLE, 0, nullptr,
                      "not a live Level Zero event");
      }
      if (owned->generation != device->generation) return XAL_SUCCESS;
    }
    std::shared_ptr<NativeEvent> native = owned->current();
    // Held by owned and here only: no call uses it.
    if (native.use_count() == 2 && native_event_idle(device, *native, false)) {
      if (xal_status_t s = check(device, native_event_destroy(device, *native),
                                 "zeEventDestroy");
          s != XAL_SUCCESS) {
        std::lock_guard lock(device->mutex);
        device->events.emplace(event, std::move(owned));
        return s;
      }
    } else {
      native_event_retire(device, std::move(native));
    }
    owned.reset();  // its reference would keep a retired native from the reap
    reap_retired_events(device);
    return XAL_SUCCESS;
  });
}

// Records on a native event the device no longer uses (reset first); else
// on a fresh one, and the previous one retires: a wait queued on the
// earlier record keeps waiting for that record, and the host never waits.
// A failed record leaves the event as it was, or, when its native event
// was reset already, as never recorded (waits on it return at once).
xal_status_t event_record(xal_bevent_t* event, xal_bstream_t* stream) {
  return guarded("levelzero event_record", [&]() -> xal_status_t {
    if (event->device != stream->device) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "event_record: the stream belongs to another device");
    }
    if (xal_status_t s = enter_event(event); s != XAL_SUCCESS) return s;
    if (xal_status_t s = enter(stream->device, stream->generation, "the stream");
        s != XAL_SUCCESS) {
      return s;
    }
    xal_bdevice_s* device = event->device;
    const ZeApi& api = device->backend->api();
    reap_retired_events(device);
    std::shared_ptr<NativeEvent> current = event->current();
    if (native_event_idle(device, *current, false)) {
      std::lock_guard lock(stream->mutex);
      stream->dirty = true;
      if (xal_status_t s = check(device, api.zeEventHostReset(current->handle),
                                 "zeEventHostReset");
          s != XAL_SUCCESS) {
        return s;
      }
      current->recorded = false;  // reset: nothing signals it until appended
      xal_status_t s = check(device,
                             api.zeCommandListAppendBarrier(stream->list,
                                                            current->handle, 0, nullptr),
                             "zeCommandListAppendBarrier");
      if (s == XAL_SUCCESS) current->recorded = true;
      return s;
    }
    std::shared_ptr<NativeEvent> fresh;
    if (xal_status_t s = native_event_create(device, event->timing, &fresh);
        s != XAL_SUCCESS) {
      return s;
    }
    xal_status_t s = XAL_SUCCESS;
    {
      std::lock_guard lock(stream->mutex);
      stream->dirty = true;
      s = check(device,
                api.zeCommandListAppendBarrier(stream->list, fresh->handle, 0, nullptr),
                "zeCommandListAppendBarrier");
    }
    if (s != XAL_SUCCESS) {
      (void)native_event_destroy(device, *fresh);  // nothing refers to it
      return s;
    }
    fresh->recorded = true;
    {
      std::lock_guard lock(event->mutex);
      event->native.swap(fresh);  // `fresh` is now the previous one
    }
    native_event_retire(device, std::move(fresh));
    return XAL_SUCCESS;
  });
}

xal_status_t stream_wait_event(xal_bstream_t* stream, xal_bevent_t* event) {
  return guarded("levelzero stream_wait_event", [&]() -> xal_status_t {
    if (xal_status_t s = enter_event(event); s != XAL_SUCCESS) return s;
    if (xal_status_t s = enter(stream->device, stream->generation, "the stream");
        s != XAL_SUCCESS) {
      return s;
    }
    // Held until the wait is queued and noted: it cannot be destroyed
    // meanwhile.
    std::shared_ptr<NativeEvent> native = event->current();
    if (!native->recorded) return XAL_SUCCESS;  // nothing to wait for
    const ZeApi& api = stream->device->backend->api();
    if (event->device->driver != stream->device->driver) {
      // Events of another driver's context cannot be waited on by this
      // list: wait on the host instead.
      return host_wait(event->device, *native);
    }
    std::lock_guard lock(stream->mutex);
    stream->dirty = true;
    ze_event_handle_t handle = native->handle;
    if (xal_status_t s = check(stream->device,
                               api.zeCommandListAppendWaitOnEvents(stream->list, 1, &handle),
                               "zeCommandListAppendWaitOnEvents");
        s != XAL_SUCCESS) {
      return s;
    }
    std::lock_guard native_lock(native->mutex);
    std::erase_if(native->waiters, [&](const std::weak_ptr<xal_bstream_s>& waiter) {
      return waiter.expired() || waiter.lock().get() == stream;
    });
    native->waiters.push_back(stream->weak_from_this());
    return XAL_SUCCESS;
  });
}

xal_status_t event_synchronize(xal_bevent_t* event) {
  return guarded("levelzero event_synchronize", [&]() -> xal_status_t {
    if (xal_status_t s = enter_event(event); s != XAL_SUCCESS) return s;
    std::shared_ptr<NativeEvent> native = event->current();
    if (!native->recorded) return XAL_SUCCESS;
    return host_wait(event->device, *native);
  });
}

xal_status_t event_query(xal_bevent_t* event) {
  return guarded("levelzero event_query", [&]() -> xal_status_t {
    if (xal_status_t s = enter_event(event); s != XAL_SUCCESS) return s;
    std::shared_ptr<NativeEvent> native = event->current();
    if (!native->recorded) return XAL_SUCCESS;
    return check(event->device,
                 event->device->backend->api().zeEventQueryStatus(native->handle),
                 "zeEventQueryStatus");
  });
}

xal_status_t event_elapsed_ms(xal_bevent_t* start, xal_bevent_t* end,
                              float* out_ms) {
  return guarded("levelzero event_elapsed_ms", [&]() -> xal_status_t {
    if (!start->timing || !end->timing) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "event_elapsed_ms: an event was created with "
                    "XAL_EVENT_DISABLE_TIMING");
    }
    const std::shared_ptr<NativeEvent> first = start->current();
    const std::shared_ptr<NativeEvent> last = end->current();
    if (!first->recorded || !last->recorded) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "event_elapsed_ms: an event was never recorded");
    }
    if (start->device != end->device) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "event_elapsed_ms: events of two devices");
    }
    if (xal_status_t s = enter_event(start); s != XAL_SUCCESS) return s;
    if (xal_status_t s = enter_event(end); s != XAL_SUCCESS) return s;
    xal_bdevice_s* device = start->device;
    const ZeApi& api = device->backend->api();
    for (const NativeEvent* native : {first.get(), last.get()}) {
      const ze_result_t r = api.zeEventQueryStatus(native->handle);
      if (r == ZE_RESULT_NOT_READY) {
        return report(XAL_NOT_READY, r, "ZE_RESULT_NOT_READY",
                      "event_elapsed_ms: an event has not completed");
      }
      if (xal_status_t s = check(device, r, "zeEventQueryStatus"); s != XAL_SUCCESS) {
        return s;
      }
    }
    ze_kernel_timestamp_result_t a{}, b{};
    if (xal_status_t s = check(device, api.zeEventQueryKernelTimestamp(first->handle, &a),
                               "zeEventQueryKernelTimestamp");
        s != XAL_SUCCESS) {
      return s;
    }
    if (xal_status_t s = check(device, api.zeEventQueryKernelTimestamp(last->handle, &b),
                               "zeEventQueryKernelTimestamp");
        s != XAL_SUCCESS) {
      return s;
    }
    const uint32_t bits = device->properties.kernelTimestampValidBits;
    const uint64_t from = ticks(a.global.kernelEnd, bits);
    const uint64_t to = ticks(b.global.kernelEnd, bits);
    // The counter may wrap once between the two events.
    const uint64_t wrap = bits >= 64 ? 0 : (uint64_t{1} << bits);
    const uint64_t delta = to >= from ? to - from : to + wrap - from;
    const double ns = static_cast<double>(delta) * device->ns_per_tick;
    *out_ms = static_cast<float>(ns / 1e6);
    return XAL_SUCCESS;
  });
}

}  // namespace xal::levelzero
