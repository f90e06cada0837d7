// Streams: in-order immediate command lists, each with a private
// host-visible event used to synchronise and query it.
#include "entries.h"
#include "errors.h"

namespace xal::levelzero {
namespace {

// ZE_COMMAND_QUEUE_FLAG_IN_ORDER (Level Zero 1.7); older drivers refuse it
// and the stream then orders its work with barriers.
constexpr ze_command_queue_flags_t kInOrder = 1u << 1;

}  // namespace

xal_status_t stream_create(xal_bdevice_t* device, uint32_t /*flags*/,
                           xal_bstream_t** out_stream) {
  return guarded("levelzero stream_create", [&]() -> xal_status_t {
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    const ZeApi& api = device->backend->api();
    ze_context_handle_t context = device->context();
    auto stream = std::make_unique<xal_bstream_s>();
    stream->device = device;
    ze_command_queue_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                 nullptr,
                                 device->compute_ordinal,
                                 0,
                                 kInOrder,
                                 ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                 ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_result_t r = api.zeCommandListCreateImmediate(context, device->handle,
                                                     &desc, &stream->list);
    if (r == ZE_RESULT_ERROR_INVALID_ENUMERATION ||
        r == ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION ||
        r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) {
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
    *out_stream = support::keep(device->streams, std::move(stream),
                                device->generation);
    return XAL_SUCCESS;
  });
}

xal_status_t stream_destroy(xal_bstream_t* stream) {
  return guarded("levelzero stream_destroy", [&]() -> xal_status_t {
    xal_bdevice_s* device = stream->device;
    bool live = false;
    {
      std::lock_guard lock(device->mutex);
      if (device->streams.count(stream) == 0) {
        return report(XAL_ERROR_INVALID_HANDLE, 0, nullptr,
                      "not a live Level Zero stream");
      }
      live = stream->generation == device->generation;
    }
    // Queued work finishes first, as xal_stream_destroy promises.
    xal_status_t sync = live ? stream_fence(stream, true) : XAL_SUCCESS;
    std::unique_ptr<xal_bstream_s> owned;
    {
      std::lock_guard lock(device->mutex);
      auto found = device->streams.find(stream);
      owned = std::move(found->second);
      device->streams.erase(found);
      live = owned->generation == device->generation;
    }
    if (live) {
      const ZeApi& api = device->backend->api();
      (void)api.zeEventDestroy(owned->sync_event);
      (void)api.zeEventPoolDestroy(owned->pool);
      (void)api.zeCommandListDestroy(owned->list);
    }
    return sync == XAL_ERROR_INVALID_HANDLE ? XAL_SUCCESS : sync;
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
