// Mock plugin entries: copies and memset, run by the stream's worker or
// inline on the caller's thread (copy_engine.h).
#include <chrono>

#include "copy_engine.h"
#include "entries.h"
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

xal_status_t memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst, const void* src,
                         size_t bytes) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(Entry{services_of(&s)}, "memcpy_htod", [&] {
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
  return guarded(Entry{services_of(&s)}, "memcpy_dtoh", [&] {
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
  return guarded(Entry{services_of(&s)}, "memcpy_dtod", [&] {
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
  return guarded(Entry{services_of(&s)}, "memcpy_peer", [&] {
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
  return guarded(Entry{services_of(&s)}, "memset", [&] {
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
