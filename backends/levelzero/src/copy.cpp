// Copies and fill on a stream's command list, and peer copies: direct
// within one context when the devices can reach each other, else staged
// through host memory.
#include <algorithm>
#include <cstring>

#include "entries.h"
#include "errors.h"
#include "xalsupport/copy_entries.h"

namespace xal::levelzero {
namespace {

void* as_pointer(xal_devptr_t address) {
  return reinterpret_cast<void*>(address);
}

bool direct_peer(xal_bdevice_s* a, xal_bdevice_s* b) {
  if (a == b) return true;
  if (a->driver != b->driver) return false;
  const ZeApi& api = a->backend->api();
  if (api.zeDeviceCanAccessPeer == nullptr) return false;
  ze_bool_t ab = 0, ba = 0;
  return api.zeDeviceCanAccessPeer(a->handle, b->handle, &ab) == ZE_RESULT_SUCCESS &&
         api.zeDeviceCanAccessPeer(b->handle, a->handle, &ba) == ZE_RESULT_SUCCESS &&
         ab != 0 && ba != 0;
}

// Host memory of a device's context, freed on scope exit.
class HostBuffer {
 public:
  HostBuffer(xal_bdevice_s* device, size_t bytes) : device_(device) {
    ze_host_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    status_ = check(device, device->backend->api().zeMemAllocHost(
                                device->context(), &desc, bytes, 64, &data_),
                    "zeMemAllocHost");
  }
  ~HostBuffer() {
    if (data_ != nullptr) {
      (void)device_->backend->api().zeMemFree(device_->context(), data_);
    }
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  xal_status_t status() const { return status_; }
  void* data() const { return data_; }
  // Leaves the memory to the host leftovers, freed at the next reset or at
  // shutdown: a copy that may still use it could not be fenced.
  void leave() {
    if (data_ == nullptr) return;
    xal_backend_s* backend = device_->backend;
    std::lock_guard lock(backend->host_mutex);
    backend->host_leftovers.emplace_back(
        data_, HostAllocation{device_->driver, device_->context()});
    data_ = nullptr;
  }

 private:
  xal_bdevice_s* device_;
  void* data_ = nullptr;
  xal_status_t status_ = XAL_SUCCESS;
};

// A stream of another device, destroyed on scope exit. When that destroy
// is refused (its work did not finish in time, a refused fence), the stream
// is marked an orphan: the next device_synchronize of its device that
// fences it destroys it (a reset or shutdown releases it too).
class TemporaryStream {
 public:
  explicit TemporaryStream(xal_bdevice_s* device) : device_(device) {
    status_ = stream_create(device, 0, &stream_);
  }
  ~TemporaryStream() {
    if (stream_ == nullptr || stream_destroy(stream_) == XAL_SUCCESS) return;
    // Refused: still owned by its device's streams.
    std::lock_guard lock(device_->mutex);
    if (auto found = device_->streams.find(stream_); found != device_->streams.end()) {
      found->second->orphan = true;
    }
  }
  TemporaryStream(const TemporaryStream&) = delete;
  TemporaryStream& operator=(const TemporaryStream&) = delete;
  xal_status_t status() const { return status_; }
  xal_bstream_s* get() const { return stream_; }

 private:
  xal_bdevice_s* device_;
  xal_bstream_s* stream_ = nullptr;
  xal_status_t status_ = XAL_SUCCESS;
};

// Staged peer copy, synchronous to the host, in 8 MiB chunks.
xal_status_t staged_copy(xal_bstream_s* stream, xal_bdevice_s* dst_device,
                         void* dst, xal_bdevice_s* src_device, const void* src,
                         size_t bytes) {
  if (xal_status_t s = stream_fence(stream, true); s != XAL_SUCCESS) return s;
  xal_bdevice_s* other = stream->device == dst_device ? src_device : dst_device;
  TemporaryStream temporary(other);
  if (temporary.status() != XAL_SUCCESS) return temporary.status();
  xal_bstream_s* src_stream = stream->device == src_device ? stream : temporary.get();
  xal_bstream_s* dst_stream = stream->device == dst_device ? stream : temporary.get();
  constexpr size_t kChunk = size_t{8} << 20;
  const size_t chunk = std::min(bytes, kChunk);
  HostBuffer from(src_device, chunk);
  if (from.status() != XAL_SUCCESS) return from.status();
  HostBuffer to(dst_device, chunk);
  if (to.status() != XAL_SUCCESS) return to.status();
  // A failure may leave a copy queued that uses the buffers.
  auto fail = [&](xal_status_t s) {
    from.leave();
    to.leave();
    return s;
  };
  for (size_t offset = 0; offset < bytes; offset += chunk) {
    const size_t n = std::min(chunk, bytes - offset);
    if (xal_status_t s = append_copy(src_stream, from.data(),
                                     static_cast<const char*>(src) + offset, n,
                                     "zeCommandListAppendMemoryCopy");
        s != XAL_SUCCESS) {
      return fail(s);
    }
    if (xal_status_t s = stream_fence(src_stream, true); s != XAL_SUCCESS) return fail(s);
    std::memcpy(to.data(), from.data(), n);
    if (xal_status_t s = append_copy(dst_stream, static_cast<char*>(dst) + offset,
                                     to.data(), n, "zeCommandListAppendMemoryCopy");
        s != XAL_SUCCESS) {
      return fail(s);
    }
    if (xal_status_t s = stream_fence(dst_stream, true); s != XAL_SUCCESS) return fail(s);
  }
  return XAL_SUCCESS;
}

}  // namespace

xal_status_t memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst,
                         const void* src, size_t bytes) {
  return guarded("levelzero memcpy_htod", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (xal_status_t s = owner_check(stream->device, dst, bytes, "memcpy_htod");
        s != XAL_SUCCESS) {
      return s;
    }
    return append_copy(stream, as_pointer(dst), src, bytes,
                       "zeCommandListAppendMemoryCopy");
  });
}

xal_status_t memcpy_dtoh(xal_bstream_t* stream, void* dst, xal_devptr_t src,
                         size_t bytes) {
  return guarded("levelzero memcpy_dtoh", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (xal_status_t s = owner_check(stream->device, src, bytes, "memcpy_dtoh");
        s != XAL_SUCCESS) {
      return s;
    }
    return append_copy(stream, dst, as_pointer(src), bytes,
                       "zeCommandListAppendMemoryCopy");
  });
}

xal_status_t memcpy_dtod(xal_bstream_t* stream, xal_devptr_t dst,
                         xal_devptr_t src, size_t bytes) {
  return guarded("levelzero memcpy_dtod", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    for (xal_devptr_t ptr : {dst, src}) {
      if (xal_status_t s = owner_check(stream->device, ptr, bytes, "memcpy_dtod");
          s != XAL_SUCCESS) {
        return s;
      }
    }
    return append_copy(stream, as_pointer(dst), as_pointer(src), bytes,
                       "zeCommandListAppendMemoryCopy");
  });
}

xal_status_t memcpy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device,
                         xal_devptr_t dst, xal_bdevice_t* src_device,
                         xal_devptr_t src, size_t bytes) {
  return guarded("levelzero memcpy_peer", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (xal_status_t s = support::check_peer_copy({sticky_check, owner_check}, stream->device,
                                                  dst_device, dst, src_device, src, bytes);
        s != XAL_SUCCESS) {
      return s;
    }
    if (direct_peer(dst_device, src_device)) {
      return append_copy(stream, as_pointer(dst), as_pointer(src), bytes,
                         "zeCommandListAppendMemoryCopy");
    }
    return staged_copy(stream, dst_device, as_pointer(dst), src_device,
                       as_pointer(src), bytes);
  });
}

xal_status_t memset(xal_bstream_t* stream, xal_devptr_t dst, uint8_t value,
                       size_t bytes) {
  return guarded("levelzero memset", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (xal_status_t s = owner_check(stream->device, dst, bytes, "memset"); s != XAL_SUCCESS) {
      return s;
    }
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
                               api.zeCommandListAppendMemoryFill(
                                   stream->list, as_pointer(dst), &value, 1, bytes,
                                   nullptr, 0, nullptr),
                               "zeCommandListAppendMemoryFill");
        s != XAL_SUCCESS) {
      return s;
    }
    if (!stream->explicit_order) return XAL_SUCCESS;
    return check(device, api.zeCommandListAppendBarrier(stream->list, nullptr, 0, nullptr),
                 "zeCommandListAppendBarrier");
  });
}

}  // namespace xal::levelzero
