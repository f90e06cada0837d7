// Mock plugin entries: device memory, host memory and copies.
#include <chrono>

#include "copy_engine.hpp"
#include "plugin.hpp"
#include "xal_common/strings.hpp"

namespace xal::mock {

namespace {

// Queues a copy, or runs it on the calling thread when the stream is idle,
// the copy is not throttled and not larger than the instance's limit.
template <class F>
void submit_copy(Stream& s, size_t bytes, double gbps, F&& body) {
  const size_t limit = s.device().backend().copies().inline_limit;
  if (gbps <= 0.0 && bytes <= limit)
    s.run_or_enqueue(std::forward<F>(body), true);
  else
    s.enqueue({Stream::Body(std::forward<F>(body)), true});
}

// The slower of two throttles (0: none).
double combined_throttle(double a, double b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

}  // namespace

xal_status_t mem_alloc(xal_bdevice_t* device, size_t bytes, xal_devptr_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(services_of(&d), "mem_alloc", [&] {
    check_not_null(out, "mem_alloc: out_ptr");
    if (bytes == 0)
      throw Error(XAL_ERROR_INVALID_ARGUMENT, "mem_alloc: size is 0");
    const Arena::AllocResult r = d.arena().allocate(bytes);
    if (r.address == 0)
      throw Error(XAL_ERROR_OUT_OF_MEMORY,
                  "mem_alloc: out of memory on mock device " +
                      std::to_string(d.index()) + " (" + d.profile().name +
                      "): requested " + std::to_string(bytes) + " bytes, free " +
                      std::to_string(r.free) + " (largest free range " +
                      std::to_string(r.largest) + "), total " +
                      std::to_string(d.arena().capacity()));
    *out = r.address;
    return XAL_SUCCESS;
  });
}

xal_status_t mem_free(xal_bdevice_t* device, xal_devptr_t ptr) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(services_of(&d), "mem_free", [&] {
    if (!d.arena().release(ptr))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "mem_free: " + hex(ptr) +
                      " is not the start of a live allocation of mock device " +
                      std::to_string(d.index()));
    return XAL_SUCCESS;
  });
}

xal_status_t mem_get_info(xal_bdevice_t* device, uint64_t* out_free, uint64_t* out_total) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(services_of(&d), "mem_get_info", [&] {
    check_not_null(out_free, "mem_get_info: out_free");
    check_not_null(out_total, "mem_get_info: out_total");
    const uint64_t total = d.arena().capacity();
    *out_total = total;
    *out_free = total - d.arena().used();
    return XAL_SUCCESS;
  });
}

xal_status_t host_alloc(xal_backend_t* backend, size_t bytes, uint32_t flags, void** out) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(b.services(), "host_alloc", [&] {
    check_not_null(out, "host_alloc: out_ptr");
    if (bytes == 0) throw Error(XAL_ERROR_INVALID_ARGUMENT, "host_alloc: size is 0");
    if (flags & ~XAL_HOST_ALLOC_WRITE_COMBINED)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "host_alloc: unknown flags " + hex(flags));
    *out = b.host_alloc(bytes);
    return XAL_SUCCESS;
  });
}

xal_status_t host_free(xal_backend_t* backend, void* ptr) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(b.services(), "host_free", [&] {
    if (!b.host_free(ptr))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "host_free: " + hex(reinterpret_cast<uint64_t>(ptr)) +
                      " was not allocated by this mock instance");
    return XAL_SUCCESS;
  });
}

xal_status_t host_register(xal_backend_t* backend, void* ptr, size_t bytes) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(b.services(), "host_register", [&] {
    check_not_null(ptr, "host_register: ptr");
    if (bytes == 0) throw Error(XAL_ERROR_INVALID_ARGUMENT, "host_register: size is 0");
    b.host_register(ptr, bytes);
    return XAL_SUCCESS;
  });
}

xal_status_t host_unregister(xal_backend_t* backend, void* ptr) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(b.services(), "host_unregister", [&] {
    if (!b.host_unregister(ptr))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "host_unregister: " + hex(reinterpret_cast<uint64_t>(ptr)) +
                      " is not registered");
    return XAL_SUCCESS;
  });
}

xal_status_t memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst, const void* src,
                         size_t bytes) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(services_of(&s), "memcpy_htod", [&] {
    if (bytes == 0) return XAL_SUCCESS;
    check_not_null(src, "memcpy_htod: src");
    void* d = s.device().checked_address(dst, bytes, "memcpy_htod: destination");
    const double gbps = s.device().profile().bandwidth_gbps;
    const size_t par = s.device().backend().copies().parallel_threshold;
    submit_copy(s, bytes, gbps, [=] {
      const auto start = throttle_start(gbps);
      copy_bytes(d, src, bytes, par);
      throttle(start, bytes, gbps);
    });
    return XAL_SUCCESS;
  });
}

xal_status_t memcpy_dtoh(xal_bstream_t* stream, void* dst, xal_devptr_t src, size_t bytes) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(services_of(&s), "memcpy_dtoh", [&] {
    if (bytes == 0) return XAL_SUCCESS;
    check_not_null(dst, "memcpy_dtoh: dst");
    const void* h = s.device().checked_address(src, bytes, "memcpy_dtoh: source");
    const double gbps = s.device().profile().bandwidth_gbps;
    const size_t par = s.device().backend().copies().parallel_threshold;
    submit_copy(s, bytes, gbps, [=] {
      const auto start = throttle_start(gbps);
      copy_bytes(dst, h, bytes, par);
      throttle(start, bytes, gbps);
    });
    return XAL_SUCCESS;
  });
}

xal_status_t memcpy_dtod(xal_bstream_t* stream, xal_devptr_t dst, xal_devptr_t src,
                         size_t bytes) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(services_of(&s), "memcpy_dtod", [&] {
    if (bytes == 0) return XAL_SUCCESS;
    void* d = s.device().checked_address(dst, bytes, "memcpy_dtod: destination");
    const void* h = s.device().checked_address(src, bytes, "memcpy_dtod: source");
    const double gbps = s.device().profile().bandwidth_gbps;
    const size_t par = s.device().backend().copies().parallel_threshold;
    submit_copy(s, bytes, gbps, [=] {
      const auto start = throttle_start(gbps);
      move_bytes(d, h, bytes, par);
      throttle(start, bytes, gbps);
    });
    return XAL_SUCCESS;
  });
}

xal_status_t memcpy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device, xal_devptr_t dst,
                         xal_bdevice_t* src_device, xal_devptr_t src, size_t bytes) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(services_of(&s), "memcpy_peer", [&] {
    Backend& b = s.device().backend();
    Device* dd = as_device(dst_device);
    Device* sd = as_device(src_device);
    if (!b.owns(dd) || !b.owns(sd))
      throw Error(XAL_ERROR_INVALID_HANDLE,
                  "memcpy_peer: both devices must be mock devices of the "
                  "stream's instance");
    if (&s.device() != dd && &s.device() != sd)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "memcpy_peer: the stream is on mock device " +
                      std::to_string(s.device().index()) +
                      ", neither the source nor the destination device");
    if (bytes == 0) return XAL_SUCCESS;
    void* d = dd->checked_address(dst, bytes, "memcpy_peer: destination");
    const void* h = sd->checked_address(src, bytes, "memcpy_peer: source");
    const double gbps = combined_throttle(dd->profile().bandwidth_gbps,
                                          sd->profile().bandwidth_gbps);
    const size_t par = b.copies().parallel_threshold;
    submit_copy(s, bytes, gbps, [=] {
      const auto start = throttle_start(gbps);
      move_bytes(d, h, bytes, par);
      throttle(start, bytes, gbps);
    });
    return XAL_SUCCESS;
  });
}

xal_status_t memset(xal_bstream_t* stream, xal_devptr_t dst, uint8_t value, size_t bytes) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(services_of(&s), "memset", [&] {
    if (bytes == 0) return XAL_SUCCESS;
    void* d = s.device().checked_address(dst, bytes, "memset: destination");
    const double gbps = s.device().profile().bandwidth_gbps;
    const size_t par = s.device().backend().copies().parallel_threshold;
    // Always queued: a memset is the device work that callers use to keep
    // a stream busy (and to watch it with queries and events).
    s.enqueue({[=] {
                 const auto start = throttle_start(gbps);
                 fill_bytes(d, value, bytes, par);
                 throttle(start, bytes, gbps);
               },
               true});
    return XAL_SUCCESS;
  });
}

}  // namespace xal::mock
