// Shared by the entries: releasing a device's objects, stream
// fences and ordered copies.
#include "entries.h"
#include "errors.h"
#include "xalsupport/copy_entries.h"

namespace xal::levelzero {

void release_device_objects(xal_bdevice_s* device) {
  const ZeApi& api = device->backend->api();
  ze_context_handle_t context = device->context();
  // Native events first, while the streams that may wait on them are still
  // there: the retired ones and those of live events of this generation.
  std::vector<std::shared_ptr<NativeEvent>> natives;
  bool healthy = false;
  {
    std::lock_guard lock(device->mutex);
    healthy = device->sticky.healthy();
    for (auto& native : device->retired_events) {
      if (native->generation == device->generation) natives.push_back(std::move(native));
    }
    device->retired_events.clear();
    for (const auto& [key, event] : device->events) {
      if (event->generation == device->generation) natives.push_back(event->current());
    }
  }
  // The device must be done with them before they go (bounded by the sync
  // timeout); a lost device runs nothing more.
  for (const auto& native : natives) {
    if (healthy) (void)native_event_idle(device, *native, true);
    (void)native_event_destroy(device, *native);
  }
  std::lock_guard lock(device->mutex);
  for (auto it = device->streams.begin(); it != device->streams.end();) {
    const std::shared_ptr<xal_bstream_s>& stream = it->second;
    if (stream->generation == device->generation) {
      if (!stream->imported) (void)api.zeCommandListDestroy(stream->list);
      (void)api.zeEventDestroy(stream->sync_event);
      (void)api.zeEventPoolDestroy(stream->pool);
    }
    // Orphans have no handle outside: they go with their native objects.
    it = stream->orphan ? device->streams.erase(it) : std::next(it);
  }
  for (const auto& [key, module] : device->modules) {
    if (module->generation != device->generation) continue;
    for (const auto& kernel : module->kernels) {
      (void)api.zeKernelDestroy(kernel->handle);
    }
    (void)api.zeModuleDestroy(module->handle);
  }
  for (const auto& [address, allocation] : device->allocations) {
    if (allocation.generation == device->generation && context != nullptr) {
      (void)api.zeMemFree(context, reinterpret_cast<void*>(address));
    }
  }
  for (const auto& [address, mapping] : device->ipc_mappings) {
    if (mapping.generation == device->generation && api.zeMemCloseIpcHandle != nullptr) {
      (void)api.zeMemCloseIpcHandle(mapping.context, reinterpret_cast<void*>(address));
    }
  }
  device->allocated_bytes = 0;
  device->generation += 1;
}

xal_status_t stream_fence(xal_bstream_s* stream, bool wait) {
  xal_bdevice_s* device = stream->device;
  if (xal_status_t s = enter(device, stream->generation, "the stream");
      s != XAL_SUCCESS) {
    return s;
  }
  const ZeApi& api = device->backend->api();
  const uint64_t timeout = device->backend->sync_timeout_ns;
  auto host_wait = [&]() -> xal_status_t {
    const ze_result_t r = api.zeEventHostSynchronize(stream->sync_event, timeout);
    if (r == ZE_RESULT_NOT_READY) {
      return report(XAL_ERROR_TIMEOUT, r, "ZE_RESULT_NOT_READY",
                    "stream did not finish within XAL_LEVELZERO_SYNC_TIMEOUT_MS");
    }
    return check(device, r, "zeEventHostSynchronize");
  };
  std::lock_guard lock(stream->mutex);
  // Destroyed while device_synchronize held it: its work finished then.
  if (stream->released) return XAL_SUCCESS;
  // A queued fence is never reset before it signalled: that would race
  // with its signal.
  if (stream->fence_pending) {
    xal_status_t s = check(device, api.zeEventQueryStatus(stream->sync_event),
                           "zeEventQueryStatus");
    if (s == XAL_NOT_READY) {
      if (!wait) return XAL_NOT_READY;
      s = host_wait();
    }
    if (s != XAL_SUCCESS) return s;
    stream->fence_pending = false;
  }
  if (!stream->dirty) return XAL_SUCCESS;
  if (xal_status_t s = check(device, api.zeEventHostReset(stream->sync_event),
                             "zeEventHostReset");
      s != XAL_SUCCESS) {
    return s;
  }
  if (xal_status_t s = check(device,
                             api.zeCommandListAppendBarrier(
                                 stream->list, stream->sync_event, 0, nullptr),
                             "zeCommandListAppendBarrier");
      s != XAL_SUCCESS) {
    return s;
  }
  stream->fence_pending = true;
  stream->dirty = false;
  xal_status_t s = wait ? host_wait()
                        : check(device, api.zeEventQueryStatus(stream->sync_event),
                                "zeEventQueryStatus");
  if (s == XAL_SUCCESS) stream->fence_pending = false;
  return s;
}

xal_status_t append_copy(xal_bstream_s* stream, void* dst, const void* src,
                         size_t bytes, const char* what) {
  xal_bdevice_s* device = stream->device;
  if (xal_status_t s = enter(device, stream->generation, "the stream");
      s != XAL_SUCCESS) {
    return s;
  }
  const ZeApi& api = device->backend->api();
  std::lock_guard lock(stream->mutex);
  stream->dirty = true;
  if (xal_status_t s = barrier_before(stream); s != XAL_SUCCESS) return s;
  if (xal_status_t s = check(device,
                             api.zeCommandListAppendMemoryCopy(
                                 stream->list, dst, src, bytes, nullptr, 0, nullptr),
                             what);
      s != XAL_SUCCESS) {
    return s;
  }
  if (!stream->explicit_order) return XAL_SUCCESS;
  return check(device,
               api.zeCommandListAppendBarrier(stream->list, nullptr, 0, nullptr),
               "zeCommandListAppendBarrier");
}

xal_status_t barrier_before(xal_bstream_s* stream) {
  if (!stream->imported) return XAL_SUCCESS;
  return check(stream->device,
               stream->device->backend->api().zeCommandListAppendBarrier(stream->list, nullptr,
                                                                         0, nullptr),
               "zeCommandListAppendBarrier");
}

xal_status_t owner_check(const xal_bdevice_s* device, xal_devptr_t ptr, size_t bytes,
                         const char* what) {
  return support::check_ipc_owner(device->ipc_owners, ptr, bytes, what);
}

}  // namespace xal::levelzero
