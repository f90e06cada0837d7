// Mock plugin entries: streams, events, modules and kernels.
#include <chrono>

#include "plugin.hpp"

namespace xal::mock {

xal_status_t stream_create(xal_bdevice_t* device, uint32_t flags, xal_bstream_t** out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(services_of(&d), "stream_create", [&] {
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
  return guarded(services_of(&d), "stream_destroy", [&] {
    if (!d.destroy_stream(s))
      throw Error(XAL_ERROR_INVALID_HANDLE, "stream_destroy: not a live mock stream");
    return XAL_SUCCESS;
  });
}

xal_status_t stream_synchronize(xal_bstream_t* stream) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(services_of(&s), "stream_synchronize", [&] {
    std::string message;
    const xal_status_t status = s.synchronize(&message);
    if (status != XAL_SUCCESS) throw Error(status, message);
    return XAL_SUCCESS;
  });
}

xal_status_t stream_query(xal_bstream_t* stream) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(services_of(&s), "stream_query", [&] {
    return s.idle() ? XAL_SUCCESS : XAL_NOT_READY;
  });
}

xal_status_t stream_enqueue_host_func(xal_bstream_t* stream, void (*fn)(void*), void* user) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Stream& s = *as_stream(stream);
  return guarded(services_of(&s), "stream_enqueue_host_func", [&] {
    check_not_null(reinterpret_cast<const void*>(fn), "stream_enqueue_host_func: fn");
    s.enqueue({[fn, user] { fn(user); }, false});
    return XAL_SUCCESS;
  });
}

xal_status_t event_create(xal_bdevice_t* device, uint32_t flags, xal_bevent_t** out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(services_of(&d), "event_create", [&] {
    check_not_null(out, "event_create: out_event");
    if (flags & ~XAL_EVENT_DISABLE_TIMING)
      throw Error(XAL_ERROR_INVALID_ARGUMENT, "event_create: unknown flags " + hex(flags));
    *out = to_handle<xal_bevent_t>(d.create_event(flags));
    return XAL_SUCCESS;
  });
}

xal_status_t event_destroy(xal_bevent_t* event) {
  XAL_MOCK_REQUIRE_HANDLE(event);
  Event* e = as_event(event);
  Device& d = e->device();
  return guarded(services_of(&d), "event_destroy", [&] {
    if (!d.destroy_event(e))
      throw Error(XAL_ERROR_INVALID_HANDLE, "event_destroy: not a live mock event");
    return XAL_SUCCESS;
  });
}

xal_status_t event_record(xal_bevent_t* event, xal_bstream_t* stream) {
  XAL_MOCK_REQUIRE_HANDLE(event);
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Event& e = *as_event(event);
  Stream& s = *as_stream(stream);
  return guarded(services_of(&e), "event_record", [&] {
    if (&s.device() != &e.device())
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "event_record: the event belongs to mock device " +
                      std::to_string(e.device().index()) + ", the stream to device " +
                      std::to_string(s.device().index()));
    e.record(s);
    return XAL_SUCCESS;
  });
}

xal_status_t stream_wait_event(xal_bstream_t* stream, xal_bevent_t* event) {
  XAL_MOCK_REQUIRE_HANDLE(event);
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Event& e = *as_event(event);
  Stream& s = *as_stream(stream);
  return guarded(services_of(&s), "stream_wait_event", [&] {
    if (&s.device().backend() != &e.device().backend())
      throw Error(XAL_ERROR_INVALID_HANDLE,
                  "stream_wait_event: the event belongs to another mock instance");
    e.make_wait(s);
    return XAL_SUCCESS;
  });
}

xal_status_t event_synchronize(xal_bevent_t* event) {
  XAL_MOCK_REQUIRE_HANDLE(event);
  Event& e = *as_event(event);
  return guarded(services_of(&e), "event_synchronize", [&] {
    e.synchronize();
    return XAL_SUCCESS;
  });
}

xal_status_t event_query(xal_bevent_t* event) {
  XAL_MOCK_REQUIRE_HANDLE(event);
  Event& e = *as_event(event);
  return guarded(services_of(&e), "event_query", [&] {
    return e.complete() ? XAL_SUCCESS : XAL_NOT_READY;
  });
}

xal_status_t event_elapsed_ms(xal_bevent_t* start, xal_bevent_t* end, float* out_ms) {
  XAL_MOCK_REQUIRE_HANDLE(start);
  XAL_MOCK_REQUIRE_HANDLE(end);
  Event& a = *as_event(start);
  Event& b = *as_event(end);
  return guarded(services_of(&a), "event_elapsed_ms", [&] {
    check_not_null(out_ms, "event_elapsed_ms: out_ms");
    if (!a.timing_enabled() || !b.timing_enabled())
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "event_elapsed_ms: an event was created with "
                  "XAL_EVENT_DISABLE_TIMING");
    Event::Clock::time_point ta, tb;
    const Event::Stamp sa = a.timestamp(&ta);
    const Event::Stamp sb = b.timestamp(&tb);
    if (sa == Event::Stamp::kNeverRecorded || sb == Event::Stamp::kNeverRecorded)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  std::string("event_elapsed_ms: the ") +
                      (sa == Event::Stamp::kNeverRecorded ? "start" : "end") +
                      " event was never recorded");
    if (sa == Event::Stamp::kPending || sb == Event::Stamp::kPending)
      return XAL_NOT_READY;
    *out_ms = std::chrono::duration<float, std::milli>(tb - ta).count();
    return XAL_SUCCESS;
  });
}

xal_status_t module_load(xal_bdevice_t* device, uint32_t format, const void* image,
                         size_t bytes, xal_bmodule_t** out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(services_of(&d), "module_load", [&] {
    check_not_null(out, "module_load: out_module");
    if (format != XAL_MODULE_FORMAT_NATIVE)
      throw Error(XAL_ERROR_NOT_SUPPORTED,
                  "module_load: the mock backend runs only XAL_MODULE_FORMAT_NATIVE "
                  "images (a list of built-in kernels: " + kernel_names() +
                      "), got format " + std::to_string(format));
    check_not_null(image, "module_load: image");
    if (bytes == 0) throw Error(XAL_ERROR_INVALID_ARGUMENT, "module_load: image size is 0");
    *out = to_handle<xal_bmodule_t>(
        d.load_module(std::string_view(static_cast<const char*>(image), bytes)));
    return XAL_SUCCESS;
  });
}

xal_status_t module_unload(xal_bmodule_t* module) {
  XAL_MOCK_REQUIRE_HANDLE(module);
  Module* m = as_module(module);
  Device& d = m->device();
  return guarded(services_of(&d), "module_unload", [&] {
    if (!d.unload_module(m))
      throw Error(XAL_ERROR_INVALID_HANDLE, "module_unload: not a live mock module");
    return XAL_SUCCESS;
  });
}

xal_status_t kernel_get(xal_bmodule_t* module, const char* name, xal_bkernel_t** out) {
  XAL_MOCK_REQUIRE_HANDLE(module);
  Module& m = *as_module(module);
  return guarded(services_of(&m.device()), "kernel_get", [&] {
    check_not_null(name, "kernel_get: name");
    check_not_null(out, "kernel_get: out_kernel");
    Kernel* k = m.find(name);
    if (!k)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  std::string("kernel_get: the module has no kernel '") + name +
                      (find_kernel(name) ? "' (a built-in, but not listed in the image)"
                                         : "' (built-ins: " + kernel_names() + ")"));
    *out = to_handle<xal_bkernel_t>(k);
    return XAL_SUCCESS;
  });
}

xal_status_t kernel_launch(xal_bstream_t* stream, xal_bkernel_t* kernel,
                           const xal_launch_config_t* config, void** args,
                           size_t arg_count) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  XAL_MOCK_REQUIRE_HANDLE(kernel);
  Stream& s = *as_stream(stream);
  return guarded(services_of(&s), "kernel_launch", [&] {
    launch_kernel(s, *as_kernel(kernel), config, args, arg_count);
    return XAL_SUCCESS;
  });
}

}  // namespace xal::mock
