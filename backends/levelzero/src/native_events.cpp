// Native events (one per pool) and their retirement: the Level Zero spec
// forbids destroying an event that the device may still use (a barrier
// that will signal it, a queued wait on it), so an event destroyed or
// recorded again meanwhile hands its native event to its device's retired
// events, destroyed once the device is done with it (see NativeEvent).
#include <algorithm>

#include "entries.h"
#include "errors.h"

namespace xal::levelzero {
namespace {

// Whether `stream` will run nothing more that could touch the event: a
// stream destroyed, invalidated by a reset, or of a device with a sticky
// error (its context is lost).
bool stream_gone(xal_bstream_s* stream, xal_status_t fence) {
  if (fence == XAL_ERROR_INVALID_HANDLE) return true;
  std::lock_guard lock(stream->device->mutex);
  return !stream->device->sticky.healthy() ||
         stream->generation != stream->device->generation;
}

}  // namespace

xal_status_t native_event_create(xal_bdevice_s* device, bool timing,
                                 std::shared_ptr<NativeEvent>* out) {
  const ZeApi& api = device->backend->api();
  auto native = std::make_shared<NativeEvent>();
  ze_event_pool_desc_t pool_desc{
      ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
      ZE_EVENT_POOL_FLAG_HOST_VISIBLE |
          (timing ? static_cast<uint32_t>(ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) : 0u),
      1};
  // No device list: the pool is visible to every device of the driver,
  // whose streams may wait on the event.
  if (xal_status_t s = check(device,
                             api.zeEventPoolCreate(device->context(), &pool_desc, 0,
                                                   nullptr, &native->pool),
                             "zeEventPoolCreate");
      s != XAL_SUCCESS) {
    return s;
  }
  ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0,
                       ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
  if (xal_status_t s = check(device, api.zeEventCreate(native->pool, &desc,
                                                       &native->handle),
                             "zeEventCreate");
      s != XAL_SUCCESS) {
    (void)api.zeEventPoolDestroy(native->pool);
    return s;
  }
  {
    std::lock_guard lock(device->mutex);
    native->generation = device->generation;
  }
  *out = std::move(native);
  return XAL_SUCCESS;
}

bool native_event_idle(xal_bdevice_s* device, NativeEvent& native, bool wait) {
  const ZeApi& api = device->backend->api();
  if (native.recorded) {
    ze_result_t r = api.zeEventQueryStatus(native.handle);
    if (r == ZE_RESULT_NOT_READY && wait) {
      r = api.zeEventHostSynchronize(native.handle, device->backend->sync_timeout_ns);
    }
    // Any other result: signalled, or a device that runs nothing more.
    if (r == ZE_RESULT_NOT_READY) return false;
  }
  std::vector<std::weak_ptr<xal_bstream_s>> waiters;
  {
    std::lock_guard lock(native.mutex);
    waiters.swap(native.waiters);
  }
  std::vector<std::weak_ptr<xal_bstream_s>> left;
  for (const auto& waiter : waiters) {
    std::shared_ptr<xal_bstream_s> stream = waiter.lock();
    if (stream == nullptr) continue;
    const xal_status_t s = stream_fence(stream.get(), wait);
    if (s == XAL_SUCCESS || stream_gone(stream.get(), s)) continue;
    left.push_back(waiter);
  }
  if (left.empty()) return true;
  std::lock_guard lock(native.mutex);
  native.waiters.insert(native.waiters.end(), left.begin(), left.end());
  return false;
}

ze_result_t native_event_destroy(xal_bdevice_s* device, NativeEvent& native) {
  const ZeApi& api = device->backend->api();
  const ze_result_t r = api.zeEventDestroy(native.handle);
  if (r == ZE_RESULT_SUCCESS) (void)api.zeEventPoolDestroy(native.pool);
  return r;
}

void native_event_retire(xal_bdevice_s* device, std::shared_ptr<NativeEvent> native) {
  std::lock_guard lock(device->mutex);
  device->retired_events.push_back(std::move(native));
}

namespace {

void reap_device(xal_bdevice_s* device) {
  std::vector<std::shared_ptr<NativeEvent>> retired;
  {
    std::lock_guard lock(device->mutex);
    retired.swap(device->retired_events);
  }
  if (retired.empty()) return;
  std::vector<std::shared_ptr<NativeEvent>> kept;
  for (const auto& native : retired) {
    // A call still holds it (a host wait, an append): not now.
    if (native.use_count() > 1 || !native_event_idle(device, *native, false) ||
        native_event_destroy(device, *native) != ZE_RESULT_SUCCESS) {
      kept.push_back(native);
    }
  }
  std::lock_guard lock(device->mutex);
  // Those of an older generation (a reset raced with this call) are left to
  // their context's destruction.
  std::erase_if(kept, [&](const auto& native) {
    return native->generation != device->generation;
  });
  device->retired_events.insert(device->retired_events.end(), kept.begin(), kept.end());
}

}  // namespace

void reap_retired_events(xal_bdevice_s* device) {
  // Streams of every device of the driver may wait on its events.
  std::vector<xal_bdevice_s*> devices;
  {
    std::lock_guard lock(device->driver->mutex);
    devices = device->driver->devices;
  }
  for (xal_bdevice_s* each : devices) reap_device(each);
}

}  // namespace xal::levelzero
