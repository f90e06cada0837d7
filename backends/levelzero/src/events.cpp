// Events: one event per pool; pools carry ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP
// unless XAL_EVENT_DISABLE_TIMING, and elapsed time comes from
// zeEventQueryKernelTimestamp. Recording appends a barrier that signals it.
#include "entries.h"
#include "errors.h"

namespace xal::levelzero {
namespace {

xal_status_t enter_event(xal_bevent_s* event) {
  return enter(event->device, event->generation, "the event");
}

// Device ticks of a kernel timestamp, masked to the valid bits.
uint64_t ticks(uint64_t value, uint32_t valid_bits) {
  return valid_bits >= 64 ? value : value & ((uint64_t{1} << valid_bits) - 1);
}

// Waits on the host for the event's last record, within the backend's
// timeout (XAL_ERROR_TIMEOUT past it). Thread-safe.
xal_status_t host_wait(xal_bevent_s* event) {
  const ze_result_t r = event->device->backend->api().zeEventHostSynchronize(
      event->handle, event->device->backend->sync_timeout_ns);
  if (r == ZE_RESULT_NOT_READY) {
    return report(XAL_ERROR_TIMEOUT, r, "ZE_RESULT_NOT_READY",
                  "event did not complete within XAL_LEVELZERO_SYNC_TIMEOUT_MS");
  }
  return check(event->device, r, "zeEventHostSynchronize");
}

// Waits on the host until the streams that queued a wait on the event's
// last record have passed it (XAL_SUCCESS when there are none). A stream
// destroyed or invalidated meanwhile is passed over; on an error the
// streams left are kept for the next record. Thread-safe.
xal_status_t fence_waiters(xal_bevent_s* event) {
  std::vector<std::weak_ptr<xal_bstream_s>> waiters;
  {
    std::lock_guard lock(event->mutex);
    waiters.swap(event->waiters);
  }
  for (size_t i = 0; i < waiters.size(); ++i) {
    std::shared_ptr<xal_bstream_s> waiter = waiters[i].lock();
    if (waiter == nullptr) continue;
    const xal_status_t s = stream_fence(waiter.get(), true);
    if (s != XAL_SUCCESS && s != XAL_ERROR_INVALID_HANDLE) {
      std::lock_guard lock(event->mutex);
      event->waiters.insert(event->waiters.end(), waiters.begin() + i, waiters.end());
      return s;
    }
  }
  return XAL_SUCCESS;
}

}  // namespace

xal_status_t event_create(xal_bdevice_t* device, uint32_t flags,
                          xal_bevent_t** out_event) {
  return guarded("levelzero event_create", [&]() -> xal_status_t {
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    const ZeApi& api = device->backend->api();
    auto event = std::make_unique<xal_bevent_s>();
    event->device = device;
    event->timing = (flags & XAL_EVENT_DISABLE_TIMING) == 0;
    ze_event_pool_desc_t pool_desc{
        ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
        ZE_EVENT_POOL_FLAG_HOST_VISIBLE |
            (event->timing ? static_cast<uint32_t>(ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) : 0u),
        1};
    // No device list: the pool is visible to every device of the driver,
    // whose streams may wait on the event.
    if (xal_status_t s = check(device,
                               api.zeEventPoolCreate(device->context(), &pool_desc,
                                                     0, nullptr, &event->pool),
                               "zeEventPoolCreate");
        s != XAL_SUCCESS) {
      return s;
    }
    ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0,
                         ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    if (xal_status_t s = check(device, api.zeEventCreate(event->pool, &desc,
                                                         &event->handle),
                               "zeEventCreate");
        s != XAL_SUCCESS) {
      (void)api.zeEventPoolDestroy(event->pool);
      return s;
    }
    std::lock_guard lock(device->mutex);
    *out_event = support::keep(device->events, std::move(event),
                               device->generation);
    return XAL_SUCCESS;
  });
}

// Releases the event; when the driver refuses to destroy it, the event is
// kept (and still owned by its device) and the error returned, so that the
// destroy can be tried again. Thread-safe.
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
    const ZeApi& api = device->backend->api();
    if (xal_status_t s = check(device, api.zeEventDestroy(owned->handle),
                               "zeEventDestroy");
        s != XAL_SUCCESS) {
      std::lock_guard lock(device->mutex);
      device->events.emplace(event, std::move(owned));
      return s;
    }
    (void)api.zeEventPoolDestroy(owned->pool);
    return XAL_SUCCESS;
  });
}

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
    const ZeApi& api = event->device->backend->api();
    if (event->recorded &&
        api.zeEventQueryStatus(event->handle) == ZE_RESULT_NOT_READY) {
      // Re-recording: let the previous signal land before the reset, which
      // would otherwise race with it.
      if (xal_status_t s = event_synchronize(event); s != XAL_SUCCESS) return s;
    }
    if (xal_status_t s = fence_waiters(event); s != XAL_SUCCESS) return s;
    std::lock_guard lock(stream->mutex);
    stream->dirty = true;
    if (xal_status_t s = check(event->device, api.zeEventHostReset(event->handle),
                               "zeEventHostReset");
        s != XAL_SUCCESS) {
      return s;
    }
    xal_status_t s = check(event->device,
                           api.zeCommandListAppendBarrier(stream->list, event->handle,
                                                          0, nullptr),
                           "zeCommandListAppendBarrier");
    if (s == XAL_SUCCESS) event->recorded = true;
    return s;
  });
}

xal_status_t stream_wait_event(xal_bstream_t* stream, xal_bevent_t* event) {
  return guarded("levelzero stream_wait_event", [&]() -> xal_status_t {
    if (xal_status_t s = enter_event(event); s != XAL_SUCCESS) return s;
    if (xal_status_t s = enter(stream->device, stream->generation, "the stream");
        s != XAL_SUCCESS) {
      return s;
    }
    if (!event->recorded) return XAL_SUCCESS;  // nothing to wait for
    const ZeApi& api = stream->device->backend->api();
    if (event->device->driver != stream->device->driver) {
      // Events of another driver's context cannot be waited on by this
      // list: wait on the host instead.
      return host_wait(event);
    }
    std::lock_guard lock(stream->mutex);
    stream->dirty = true;
    ze_event_handle_t handle = event->handle;
    if (xal_status_t s = check(stream->device,
                               api.zeCommandListAppendWaitOnEvents(stream->list, 1, &handle),
                               "zeCommandListAppendWaitOnEvents");
        s != XAL_SUCCESS) {
      return s;
    }
    std::lock_guard event_lock(event->mutex);
    std::erase_if(event->waiters, [&](const std::weak_ptr<xal_bstream_s>& waiter) {
      return waiter.expired() || waiter.lock().get() == stream;
    });
    event->waiters.push_back(stream->weak_from_this());
    return XAL_SUCCESS;
  });
}

xal_status_t event_synchronize(xal_bevent_t* event) {
  return guarded("levelzero event_synchronize", [&]() -> xal_status_t {
    if (xal_status_t s = enter_event(event); s != XAL_SUCCESS) return s;
    if (!event->recorded) return XAL_SUCCESS;
    return host_wait(event);
  });
}

xal_status_t event_query(xal_bevent_t* event) {
  return guarded("levelzero event_query", [&]() -> xal_status_t {
    if (xal_status_t s = enter_event(event); s != XAL_SUCCESS) return s;
    if (!event->recorded) return XAL_SUCCESS;
    return check(event->device,
                 event->device->backend->api().zeEventQueryStatus(event->handle),
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
    if (!start->recorded || !end->recorded) {
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
    for (xal_bevent_s* event : {start, end}) {
      const ze_result_t r = api.zeEventQueryStatus(event->handle);
      if (r == ZE_RESULT_NOT_READY) {
        return report(XAL_NOT_READY, r, "ZE_RESULT_NOT_READY",
                      "event_elapsed_ms: an event has not completed");
      }
      if (xal_status_t s = check(device, r, "zeEventQueryStatus"); s != XAL_SUCCESS) {
        return s;
      }
    }
    ze_kernel_timestamp_result_t a{}, b{};
    if (xal_status_t s = check(device, api.zeEventQueryKernelTimestamp(start->handle, &a),
                               "zeEventQueryKernelTimestamp");
        s != XAL_SUCCESS) {
      return s;
    }
    if (xal_status_t s = check(device, api.zeEventQueryKernelTimestamp(end->handle, &b),
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
    // timerResolution is in nanoseconds per tick for this properties type.
    const double ns = static_cast<double>(delta) *
                      static_cast<double>(device->properties.timerResolution);
    *out_ms = static_cast<float>(ns / 1e6);
    return XAL_SUCCESS;
  });
}

}  // namespace xal::levelzero
