// Copies and memset, checked against the allocation registry.
#include <atomic>

#include "compute_share.hpp"
#include "error.hpp"
#include "peer_copy.hpp"
#include "runtime.hpp"

using namespace xal::core;

namespace {

// The status of an operation queued on `s`; on success traced (XAL_TRACE)
// and its bytes added to `counter` (when given): the copy counters count
// what was queued, never a copy the backend refused.
inline xal_status_t done(StreamObj* s, xal_status_t st, const char* op, const trace::OpArgs& args,
                         std::atomic<uint64_t>* counter = nullptr) {
  if (st != XAL_SUCCESS) return fail_backend(s->device->backend, s->device, st);
  if (counter) counter->fetch_add(args.bytes, std::memory_order_relaxed);
  if (trace_on()) trace::device_op(s, op, args);
  return st;
}

}  // namespace

extern "C" {

// Host to device, ordered on `stream`. Thread-safe.
XAL_API xal_status_t xal_memcpy_htod(xal_stream_t stream, xal_devptr_t dst,
                                     const void* src, size_t bytes) {
  return entry("xal_memcpy_htod", [&] {
    StreamObj* s = as_stream(stream);
    if (!s) return bad_handle(stream, "stream");
    if (bytes == 0) return XAL_SUCCESS;
    if (!src) return fail(s->device, XAL_ERROR_INVALID_ARGUMENT, "src is NULL");
    Runtime* rt = runtime();
    if (xal_status_t r = check_range(rt, s->device, dst, bytes, "dst"); r) return r;
    return done(s, submit_shared(s, [&] {
                  return s->hdr.table->memcpy_htod(s->native, dst, src, bytes);
                }),
                "memcpy_htod", {.bytes = bytes}, &s->device->state->counters.bytes_htod);
  });
}

// Device to host, ordered on `stream`. Thread-safe.
XAL_API xal_status_t xal_memcpy_dtoh(xal_stream_t stream, void* dst,
                                     xal_devptr_t src, size_t bytes) {
  return entry("xal_memcpy_dtoh", [&] {
    StreamObj* s = as_stream(stream);
    if (!s) return bad_handle(stream, "stream");
    if (bytes == 0) return XAL_SUCCESS;
    if (!dst) return fail(s->device, XAL_ERROR_INVALID_ARGUMENT, "dst is NULL");
    Runtime* rt = runtime();
    if (xal_status_t r = check_range(rt, s->device, src, bytes, "src"); r) return r;
    return done(s, submit_shared(s, [&] {
                  return s->hdr.table->memcpy_dtoh(s->native, dst, src, bytes);
                }),
                "memcpy_dtoh", {.bytes = bytes}, &s->device->state->counters.bytes_dtoh);
  });
}

// Device to device on the stream's device. Thread-safe.
XAL_API xal_status_t xal_memcpy_dtod(xal_stream_t stream, xal_devptr_t dst,
                                     xal_devptr_t src, size_t bytes) {
  return entry("xal_memcpy_dtod", [&] {
    StreamObj* s = as_stream(stream);
    if (!s) return bad_handle(stream, "stream");
    if (bytes == 0) return XAL_SUCCESS;
    Runtime* rt = runtime();
    if (xal_status_t r = check_range(rt, s->device, dst, bytes, "dst"); r) return r;
    if (xal_status_t r = check_range(rt, s->device, src, bytes, "src"); r) return r;
    return done(s, submit_shared(s, [&] {
                  return s->hdr.table->memcpy_dtod(s->native, dst, src, bytes);
                }),
                "memcpy_dtod", {.bytes = bytes}, &s->device->state->counters.bytes_dtod);
  });
}

// Sets bytes on the stream's device. Thread-safe.
XAL_API xal_status_t xal_memset(xal_stream_t stream, xal_devptr_t dst,
                                uint8_t value, size_t bytes) {
  return entry("xal_memset", [&] {
    StreamObj* s = as_stream(stream);
    if (!s) return bad_handle(stream, "stream");
    if (bytes == 0) return XAL_SUCCESS;
    Runtime* rt = runtime();
    if (xal_status_t r = check_range(rt, s->device, dst, bytes, "dst"); r) return r;
    return done(s, submit_shared(s, [&] {
                  return s->hdr.table->memset(s->native, dst, value, bytes);
                }),
                "memset", {.bytes = bytes});
  });
}

// Between any two devices. Thread-safe.
XAL_API xal_status_t xal_memcpy_peer(xal_stream_t stream,
                                     xal_device_t dst_device, xal_devptr_t dst,
                                     xal_device_t src_device, xal_devptr_t src,
                                     size_t bytes) {
  return entry("xal_memcpy_peer", [&] {
    StreamObj* s = as_stream(stream);
    if (!s) return bad_handle(stream, "stream");
    DeviceObj* dd = as_device(dst_device);
    if (!dd) return bad_handle(dst_device, "dst_device");
    DeviceObj* sd = as_device(src_device);
    if (!sd) return bad_handle(src_device, "src_device");
    if (s->device != dd && s->device != sd)
      return fail(s->device, XAL_ERROR_INVALID_ARGUMENT,
                  cat("stream of device ", s->device->index,
                      " belongs to neither device ", sd->index, " nor ",
                      dd->index));
    if (bytes == 0) return XAL_SUCCESS;
    Runtime* rt = runtime();
    if (xal_status_t r = check_range(rt, dd, dst, bytes, "dst"); r) return r;
    if (xal_status_t r = check_range(rt, sd, src, bytes, "src"); r) return r;
    // Counted on both devices (once when they are one), only once queued.
    auto counted = [&](xal_status_t st) {
      if (st != XAL_SUCCESS) return st;
      sd->state->counters.bytes_peer.fetch_add(bytes, std::memory_order_relaxed);
      if (dd != sd) dd->state->counters.bytes_peer.fetch_add(bytes, std::memory_order_relaxed);
      return st;
    };
    const trace::OpArgs args{
        .bytes = bytes, .peer = static_cast<int64_t>(s->device == dd ? sd->index : dd->index)};
    // Two partitions of one card: a copy within the card.
    if (dd == sd || dd->native == sd->native)
      return counted(done(s, submit_shared(s, [&] {
                            return s->hdr.table->memcpy_dtod(s->native, dst, src, bytes);
                          }),
                          "memcpy_peer", args));
    if (dd->backend == sd->backend && s->hdr.table->memcpy_peer)
      return counted(done(s, submit_shared(s, [&] {
                            return s->hdr.table->memcpy_peer(s->native, dd->native, dst,
                                                             sd->native, src, bytes);
                          }),
                          "memcpy_peer", args));
    const xal_status_t st = submit_shared(
        s, [&] { return staged_peer_copy(s, dd, dst, sd, src, bytes); });
    if (st == XAL_SUCCESS && trace_on()) trace::device_op(s, "memcpy_peer (staged)", args);
    return counted(st);
  });
}

}  // extern "C"
