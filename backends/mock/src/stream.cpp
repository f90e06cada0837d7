// Mock plugin entries: streams and host functions (the worker: stream_worker.h).
#include "entries.h"

namespace xal::mock {

xal_status_t stream_create(xal_bdevice_t* device, uint32_t flags, xal_bstream_t** out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "stream_create", [&] {
    check_not_null(out, "stream_create: out_stream");
    if (flags & ~XAL_STREAM_NON_BLOCKING)
      throw Error(XAL_ERROR_INVALID_ARGUMENT, "stream_create: unknown flags " + hex(flags));
    try {
      *out = to_handle<xal_bstream_t>(d.create_stream(flags));
    } catch (const std::system_error& e) {
      throw Error(XAL_ERROR_OUT_OF_HOST_MEMORY,
                  std::string("stream_create: cannot start a worker thread: ") + e.what());
    }
    return XAL_SUCCESS;
  });
}

xal_status_t stream_destroy(xal_bstream_t* stream) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream* s = as_stream(stream);
  Device& d = s->device();
  return guarded(Entry{services_of(&d)}, "stream_destroy", [&] {
    if (!d.destroy_stream(s))
      throw Error(XAL_ERROR_INVALID_HANDLE, "stream_destroy: not a live mock stream");
    return XAL_SUCCESS;
  });
}

xal_status_t stream_synchronize(xal_bstream_t* stream) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(Entry{services_of(&s)}, "stream_synchronize", [&] {
    std::string message;
    const xal_status_t status = s.synchronize(&message);
    if (status != XAL_SUCCESS) throw Error(status, message);
    return XAL_SUCCESS;
  });
}

xal_status_t stream_query(xal_bstream_t* stream) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(Entry{services_of(&s)}, "stream_query", [&] {
    return s.idle() ? XAL_SUCCESS : XAL_NOT_READY;
  });
}

xal_status_t stream_enqueue_host_func(xal_bstream_t* stream, void (*fn)(void*), void* user) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(Entry{services_of(&s)}, "stream_enqueue_host_func", [&] {
    check_not_null(reinterpret_cast<const void*>(fn), "stream_enqueue_host_func: fn");
    s.enqueue({[fn, user] { fn(user); }, false});
    return XAL_SUCCESS;
  });
}

}  // namespace xal::mock
