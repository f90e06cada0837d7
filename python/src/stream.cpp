// xal_stream_*, xal_event_* and the copies and memset queued on a stream.
#include "stream.hpp"

#include "host_view.hpp"
#include "memory.hpp"

namespace xalpy {

Stream::~Stream() {
  if (!closed_) quiet_call(gen_, [&] { return xal_stream_destroy(handle_); });
}

void Stream::close() {
  if (closed_) return;
  closed_ = true;
  if (!session::current(gen_)) return;  // xal_shutdown released it
  call(gen_, "xal_stream_destroy", [&] { return xal_stream_destroy(handle_); });
}

Event::~Event() {
  if (!closed_) quiet_call(gen_, [&] { return xal_event_destroy(handle_); });
}

void Event::close() {
  if (closed_) return;
  closed_ = true;
  if (!session::current(gen_)) return;
  call(gen_, "xal_event_destroy", [&] { return xal_event_destroy(handle_); });
}

namespace {

Stream* stream_create(const Device& dev, uint32_t flags) {
  xal_stream_t h = nullptr;
  call(dev.gen, "xal_stream_create", [&] { return xal_stream_create(dev.handle, flags, &h); });
  return new Stream(dev, h, false);
}

Stream* stream_import(const Device& dev, uint64_t native, uint32_t flags) {
  xal_stream_t h = nullptr;
  call(dev.gen, "xal_stream_import",
       [&] { return xal_stream_import(dev.handle, native, flags, &h); });
  return new Stream(dev, h, true);
}

Event* event_create(const Device& dev, uint32_t flags) {
  xal_event_t h = nullptr;
  call(dev.gen, "xal_event_create", [&] { return xal_event_create(dev.handle, flags, &h); });
  return new Event(dev, h);
}

void htod(const Stream& s, const Allocation& dst, size_t dst_offset, const HostView& src,
          size_t src_offset, size_t bytes) {
  const char* op = "xal_memcpy_htod";
  xal_stream_t sh = s.get(op);
  same_session(op, s.generation(), dst.generation());
  const xal_devptr_t d = dst.at(op, dst_offset, bytes);
  src.check_range(op, src_offset, bytes);
  const char* p = static_cast<const char*>(src.data()) + src_offset;
  call(s.generation(), op, [&] { return xal_memcpy_htod(sh, d, p, bytes); });
}

void dtoh(const Stream& s, const HostView& dst, size_t dst_offset, const Allocation& src,
          size_t src_offset, size_t bytes) {
  const char* op = "xal_memcpy_dtoh";
  xal_stream_t sh = s.get(op);
  same_session(op, s.generation(), src.generation());
  if (dst.readonly()) invalid(op, "the host destination is read-only");
  dst.check_range(op, dst_offset, bytes);
  const xal_devptr_t p = src.at(op, src_offset, bytes);
  char* d = static_cast<char*>(dst.data()) + dst_offset;
  call(s.generation(), op, [&] { return xal_memcpy_dtoh(sh, d, p, bytes); });
}

// dtod on one device, peer across two.
void dtod(const Stream& s, const Allocation& dst, size_t dst_offset, const Allocation& src,
          size_t src_offset, size_t bytes) {
  const bool peer = dst.device().handle != src.device().handle;
  const char* op = peer ? "xal_memcpy_peer" : "xal_memcpy_dtod";
  xal_stream_t sh = s.get(op);
  same_session(op, s.generation(), dst.generation());
  same_session(op, s.generation(), src.generation());
  const xal_devptr_t d = dst.at(op, dst_offset, bytes);
  const xal_devptr_t p = src.at(op, src_offset, bytes);
  call(s.generation(), op, [&] {
    return peer ? xal_memcpy_peer(sh, dst.device().handle, d, src.device().handle, p, bytes)
                : xal_memcpy_dtod(sh, d, p, bytes);
  });
}

void memset(const Stream& s, const Allocation& dst, size_t offset, uint8_t value, size_t bytes) {
  const char* op = "xal_memset";
  xal_stream_t sh = s.get(op);
  same_session(op, s.generation(), dst.generation());
  const xal_devptr_t d = dst.at(op, offset, bytes);
  call(s.generation(), op, [&] { return xal_memset(sh, d, value, bytes); });
}

bool stream_query(const Stream& s) {
  xal_stream_t h = s.get("xal_stream_query");
  return call(s.generation(), "xal_stream_query", [&] { return xal_stream_query(h); }) ==
         XAL_SUCCESS;
}

void stream_wait(const Stream& s, const Event& e) {
  const char* op = "xal_stream_wait_event";
  xal_stream_t sh = s.get(op);
  xal_event_t eh = e.get(op);
  same_session(op, s.generation(), e.generation());
  call(s.generation(), op, [&] { return xal_stream_wait_event(sh, eh); });
}

void event_record(const Event& e, const Stream& s) {
  const char* op = "xal_event_record";
  xal_event_t eh = e.get(op);
  xal_stream_t sh = s.get(op);
  same_session(op, s.generation(), e.generation());
  call(e.generation(), op, [&] { return xal_event_record(eh, sh); });
}

float elapsed_ms(const Event& start, const Event& end) {
  const char* op = "xal_event_elapsed_ms";
  xal_event_t a = start.get(op);
  xal_event_t b = end.get(op);
  same_session(op, start.generation(), end.generation());
  float ms = 0;
  call(start.generation(), op, [&] { return xal_event_elapsed_ms(a, b, &ms); });
  return ms;
}

}  // namespace

void bind_stream(nb::module_& m) {
  nb::class_<Stream>(m, "StreamHandle", "An xal_stream_t, destroyed on close.")
      .def_prop_ro("device", [](const Stream& s) { return s.device(); })
      .def_prop_ro("closed", &Stream::closed)
      .def_prop_ro("imported", &Stream::imported)
      .def_prop_ro("generation", &Stream::generation)
      .def("close", &Stream::close)
      .def("synchronize",
           [](const Stream& s) {
             xal_stream_t h = s.get("xal_stream_synchronize");
             call(s.generation(), "xal_stream_synchronize",
                  [&] { return xal_stream_synchronize(h); });
           })
      .def("query", &stream_query)
      .def("wait_event", &stream_wait)
      .def("htod", &htod)
      .def("dtoh", &dtoh)
      .def("dtod", &dtod)
      .def("memset", &memset);
  nb::class_<Event>(m, "EventHandle", "An xal_event_t, destroyed on close.")
      .def_prop_ro("device", [](const Event& e) { return e.device(); })
      .def_prop_ro("closed", &Event::closed)
      .def_prop_ro("generation", &Event::generation)
      .def("close", &Event::close)
      .def("record", &event_record)
      .def("synchronize",
           [](const Event& e) {
             xal_event_t h = e.get("xal_event_synchronize");
             call(e.generation(), "xal_event_synchronize",
                  [&] { return xal_event_synchronize(h); });
           })
      .def("query", [](const Event& e) {
        xal_event_t h = e.get("xal_event_query");
        return call(e.generation(), "xal_event_query", [&] { return xal_event_query(h); }) ==
               XAL_SUCCESS;
      });
  m.def("stream_create", &stream_create, nb::rv_policy::take_ownership);
  m.def("stream_import", &stream_import, nb::rv_policy::take_ownership);
  m.def("event_create", &event_create, nb::rv_policy::take_ownership);
  m.def("event_elapsed_ms", &elapsed_ms);
  m.attr("STREAM_NON_BLOCKING") = XAL_STREAM_NON_BLOCKING;
  m.attr("EVENT_DISABLE_TIMING") = XAL_EVENT_DISABLE_TIMING;
}

}  // namespace xalpy
