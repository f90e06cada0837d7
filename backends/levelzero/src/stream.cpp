// Streams: in-order immediate command lists, each with a private
// host-visible event used to synchronise and query it (or the caller's own
// immediate list, adopted by stream_import in interop.cpp).
#include "entries.h"
#include "errors.h"

namespace xal::levelzero {
namespace {

// ZE_COMMAND_QUEUE_FLAG_IN_ORDER, of Level Zero 1.7 (not in the 1.4
// headers). A driver of an older API may refuse the bit, or accept it and
// ignore it (Intel's compute-runtime tests only the bits it knows): below
// 1.7 the flag is not asked for, and there, or when it is refused, the
// stream orders its work with a barrier after each command.
constexpr ze_command_queue_flags_t kInOrder = 1u << 1;
constexpr uint32_t kInOrderSince = ZE_MAKE_VERSION(1, 7);

}  // namespace

xal_status_t stream_create(xal_bdevice_t* device, uint32_t /*flags*/,
                           xal_bstream_t** out_stream) {
  return guarded("levelzero stream_create", [&]() -> xal_status_t {
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    const ZeApi& api = device->backend->api();
    ze_context_handle_t context = device->context();
    auto stream = std::make_shared<xal_bstream_s>();
    stream->device = device;
    const bool in_order = device->driver->api_version >= kInOrderSince;
    stream->explicit_order = !in_order;
    ze_command_queue_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                 nullptr,
                                 device->compute_ordinal,
                                 0,
                                 in_order ? kInOrder : 0,
                                 ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                 ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_result_t r = api.zeCommandListCreateImmediate(context, device->handle,
                                                     &desc, &stream->list);
    if (in_order && (r == ZE_RESULT_ERROR_INVALID_ENUMERATION ||
                     r == ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION ||
                     r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)) {
      desc.flags = 0;
      stream->explicit_order = true;
      r = api.zeCommandListCreateImmediate(context, device->handle, &desc,
                                           &stream->list);
    }
    if (xal_status_t s = check(device, r, "zeCommandListCreateImmediate");
        s != XAL_SUCCESS) {
      return s;
    }
    ze_event_pool_desc_t pool_desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                   ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_device_handle_t handle = device->handle;
    xal_status_t s = check(device,
                           api.zeEventPoolCreate(context, &pool_desc, 1, &handle,
                                                 &stream->pool),
                           "zeEventPoolCreate");
    if (s == XAL_SUCCESS) {
      ze_event_desc_t event_desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0,
                                 ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
      s = check(device, api.zeEventCreate(stream->pool, &event_desc,
                                          &stream->sync_event),
                "zeEventCreate");
    }
    if (s != XAL_SUCCESS) {
      if (stream->pool != nullptr) (void)api.zeEventPoolDestroy(stream->pool);
      (void)api.zeCommandListDestroy(stream->list);
      return s;
    }
    std::lock_guard lock(device->mutex);
    stream->generation = device->generation;
    *out_stream = stream.get();
    device->streams.emplace(stream.get(), std::move(stream));
    return XAL_SUCCESS;
  });
}

// Waits for the stream's work, then releases it. When that wait fails on a
// healthy device (a timeout, a refused fence) the work may still run: the
// stream is kept and the error returned, so that the destroy can be tried
// again. On a lost device the work never finishes: the stream is released
// and the destroy succeeds (the device's sticky error stays). A
// device_synchronize fencing the stream meanwhile keeps it alive until it
// is done; the native objects go here. Thread-safe.
xal_status_t stream_destroy(xal_bstream_t* stream) {
  return guarded("levelzero stream_destroy", [&]() -> xal_status_t {
    xal_bdevice_s* device = stream->device;
    auto not_live = [] {
      return report(XAL_ERROR_INVALID_HANDLE, 0, nullptr,
                    "not a live Level Zero stream");
    };
    {
      std::lock_guard lock(device->mutex);
      if (device->streams.count(stream) == 0) return not_live();
    }
    // Queued work finishes first, as xal_stream_destroy promises. A stream
    // that a reset invalidated gives XAL_ERROR_INVALID_HANDLE: nothing to
    // wait for.
    const xal_status_t sync = stream_fence(stream, true);
    std::shared_ptr<xal_bstream_s> owned;
    bool live = false;
    {
      std::lock_guard lock(device->mutex);
      auto found = device->streams.find(stream);
      if (found == device->streams.end()) return not_live();
      if (sync != XAL_SUCCESS && sync != XAL_ERROR_INVALID_HANDLE &&
          device->sticky.healthy()) {
        return sync;
      }
      owned = std::move(found->second);
      device->streams.erase(found);
      live = owned->generation == device->generation;
    }
    {
      std::lock_guard lock(owned->mutex);
      if (live) {
        const ZeApi& api = device->backend->api();
        (void)api.zeEventDestroy(owned->sync_event);
        (void)api.zeEventPoolDestroy(owned->pool);
        // An imported list stays its owner's.
        if (!owned->imported) (void)api.zeCommandListDestroy(owned->list);
      }
      owned->released = true;
    }
    // Its waits passed: native events retired meanwhile may go now.
    reap_retired_events(device);
    return XAL_SUCCESS;
  });
}

xal_status_t stream_synchronize(xal_bstream_t* stream) {
  return guarded("levelzero stream_synchronize",
                 [&]() -> xal_status_t { return stream_fence(stream, true); });
}

xal_status_t stream_query(xal_bstream_t* stream) {
  return guarded("levelzero stream_query",
                 [&]() -> xal_status_t { return stream_fence(stream, false); });
}

}  // namespace xal::levelzero
