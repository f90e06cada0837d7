// Table entries: streams, copies and events.
#include <vector>

#include "backend.hpp"

namespace xal::fault {
namespace {

xal_status_t dead(FaultBackend* b, const char* what) {
  return b->report(XAL_ERROR_INVALID_HANDLE,
                   std::string("fault: the ") + what +
                       " was invalidated by device_reset");
}

xal_status_t fault_stream_create(xal_bdevice_t* device, uint32_t flags,
                                 xal_bstream_t** out) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "stream_create", [&] {
    const auto s =
        b->before(Op::stream_create, d, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    auto w = std::make_unique<FaultStream>();
    w->device = d;
    const auto c = b->t.stream_create(d->target, flags, &w->target);
    if (c != XAL_SUCCESS) return c;
    *out = reinterpret_cast<xal_bstream_t*>(b->streams.add(std::move(w)));
    return XAL_SUCCESS;
  });
}

xal_status_t fault_stream_destroy(xal_bstream_t* stream) {
  FaultStream* w = as_fault(stream);
  FaultBackend* b = w->device->backend;
  return guarded(FaultEntry{b}, "stream_destroy", [&] {
    const auto s = b->before(Op::stream_destroy, w->device, nullptr,
                             std::nullopt, 0, nullptr, nullptr, w);
    if (s != XAL_SUCCESS) return s;
    // A destroy that failed has not released the stream (xal_backend.h,
    // "Releases"): the wrapper stays for the core's retry.
    if (!w->dead.load()) {
      const auto d = b->t.stream_destroy(w->target);
      if (d != XAL_SUCCESS) return d;
    }
    b->unbind_pending(w);
    b->streams.take(w);  // frees the wrapper
    return XAL_SUCCESS;
  });
}

// Sync-like stream entries share one shape.
template <Op kOp, xal_status_t (*xal_backend_table_t::*kEntry)(xal_bstream_t*)>
xal_status_t stream_call(xal_bstream_t* stream) {
  FaultStream* w = as_fault(stream);
  FaultBackend* b = w->device->backend;
  return guarded(FaultEntry{b}, op_name(kOp).data(), [&] {
    if (w->dead.load()) return dead(b, "stream");
    const auto s = b->before(kOp, w->device, nullptr, std::nullopt, 0,
                             nullptr, nullptr, w);
    if (s != XAL_SUCCESS) return s;
    return (b->t.*kEntry)(w->target);
  });
}

xal_status_t fault_stream_enqueue_host_func(xal_bstream_t* stream,
                                            void (*fn)(void*), void* user) {
  FaultStream* w = as_fault(stream);
  FaultBackend* b = w->device->backend;
  return guarded(FaultEntry{b}, "stream_enqueue_host_func", [&] {
    if (w->dead.load()) return dead(b, "stream");
    const auto s = b->before(Op::stream_enqueue_host_func, w->device, nullptr,
                             std::nullopt, 0, nullptr, nullptr, w);
    if (s != XAL_SUCCESS) return s;
    if (b->t.stream_enqueue_host_func != nullptr) {
      return b->t.stream_enqueue_host_func(w->target, fn, user);
    }
    // As the core would without host funcs: finish the stream, then call.
    const auto sync = b->t.stream_synchronize(w->target);
    if (sync != XAL_SUCCESS) return sync;
    fn(user);
    return XAL_SUCCESS;
  });
}

xal_status_t fault_memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst,
                               const void* src, size_t bytes) {
  FaultStream* w = as_fault(stream);
  FaultBackend* b = w->device->backend;
  return guarded(FaultEntry{b}, "memcpy_htod", [&] {
    if (w->dead.load()) return dead(b, "stream");
    std::optional<Decision> flip;
    const auto s = b->before(Op::memcpy_htod, w->device, nullptr, bytes, bytes,
                             &flip, nullptr, w);
    if (s != XAL_SUCCESS) return s;
    const auto c = b->t.memcpy_htod(w->target, dst, src, bytes);
    if (c == XAL_SUCCESS && flip) {
      b->flip_output(w, w->device, dst, nullptr, bytes, *flip);
    }
    return c;
  });
}

xal_status_t fault_memcpy_dtoh(xal_bstream_t* stream, void* dst,
                               xal_devptr_t src, size_t bytes) {
  FaultStream* w = as_fault(stream);
  FaultBackend* b = w->device->backend;
  return guarded(FaultEntry{b}, "memcpy_dtoh", [&] {
    if (w->dead.load()) return dead(b, "stream");
    std::optional<Decision> flip;
    const auto s = b->before(Op::memcpy_dtoh, w->device, nullptr, bytes, bytes,
                             &flip, nullptr, w);
    if (s != XAL_SUCCESS) return s;
    const auto c = b->t.memcpy_dtoh(w->target, dst, src, bytes);
    if (c == XAL_SUCCESS && flip) {
      b->flip_output(w, w->device, 0, dst, bytes, *flip);
    }
    return c;
  });
}

xal_status_t fault_memcpy_dtod(xal_bstream_t* stream, xal_devptr_t dst,
                               xal_devptr_t src, size_t bytes) {
  FaultStream* w = as_fault(stream);
  FaultBackend* b = w->device->backend;
  return guarded(FaultEntry{b}, "memcpy_dtod", [&] {
    if (w->dead.load()) return dead(b, "stream");
    std::optional<Decision> flip;
    const auto s = b->before(Op::memcpy_dtod, w->device, nullptr, bytes, bytes,
                             &flip, nullptr, w);
    if (s != XAL_SUCCESS) return s;
    const auto c = b->t.memcpy_dtod(w->target, dst, src, bytes);
    if (c == XAL_SUCCESS && flip) {
      b->flip_output(w, w->device, dst, nullptr, bytes, *flip);
    }
    return c;
  });
}

// Peer copy through host memory when the target has no peer path.
xal_status_t staged_peer(FaultBackend* b, FaultStream* w, FaultDevice* dd,
                         xal_devptr_t dst, FaultDevice* sd, xal_devptr_t src,
                         size_t bytes) {
  auto& t = b->t;
  xal_status_t s = t.stream_synchronize(w->target);
  if (s != XAL_SUCCESS) return s;
  std::vector<uint8_t> buffer(bytes);
  for (int pass = 0; pass < 2 && s == XAL_SUCCESS; ++pass) {
    FaultDevice* dev = pass == 0 ? sd : dd;
    xal_bstream_t* tmp = nullptr;
    s = t.stream_create(dev->target, 0, &tmp);
    if (s != XAL_SUCCESS) break;
    s = pass == 0 ? t.memcpy_dtoh(tmp, buffer.data(), src, bytes)
                  : t.memcpy_htod(tmp, dst, buffer.data(), bytes);
    if (s == XAL_SUCCESS) s = t.stream_synchronize(tmp);
    t.stream_destroy(tmp);
  }
  return s;
}

xal_status_t fault_memcpy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device,
                               xal_devptr_t dst, xal_bdevice_t* src_device,
                               xal_devptr_t src, size_t bytes) {
  FaultStream* w = as_fault(stream);
  FaultBackend* b = w->device->backend;
  FaultDevice* dd = as_fault(dst_device);
  FaultDevice* sd = as_fault(src_device);
  return guarded(FaultEntry{b}, "memcpy_peer", [&] {
    if (w->dead.load()) return dead(b, "stream");
    std::optional<Decision> flip;
    FaultDevice* other = dd == w->device ? sd : dd;
    const auto s = b->before(Op::memcpy_peer, w->device, other, bytes, bytes,
                             &flip, nullptr, w);
    if (s != XAL_SUCCESS) return s;
    const auto c =
        b->t.memcpy_peer != nullptr
            ? b->t.memcpy_peer(w->target, dd->target, dst, sd->target, src,
                               bytes)
            : staged_peer(b, w, dd, dst, sd, src, bytes);
    if (c == XAL_SUCCESS && flip) {
      b->flip_output(w, dd, dst, nullptr, bytes, *flip);
    }
    return c;
  });
}

xal_status_t fault_memset(xal_bstream_t* stream, xal_devptr_t dst,
                          uint8_t value, size_t bytes) {
  FaultStream* w = as_fault(stream);
  FaultBackend* b = w->device->backend;
  return guarded(FaultEntry{b}, "memset", [&] {
    if (w->dead.load()) return dead(b, "stream");
    std::optional<Decision> flip;
    const auto s = b->before(Op::memset, w->device, nullptr, bytes, bytes, &flip,
                             nullptr, w);
    if (s != XAL_SUCCESS) return s;
    const auto c = b->t.memset(w->target, dst, value, bytes);
    if (c == XAL_SUCCESS && flip) {
      b->flip_output(w, w->device, dst, nullptr, bytes, *flip);
    }
    return c;
  });
}

xal_status_t fault_event_create(xal_bdevice_t* device, uint32_t flags,
                                xal_bevent_t** out) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "event_create", [&] {
    const auto s =
        b->before(Op::event_create, d, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    auto w = std::make_unique<FaultEvent>();
    w->device = d;
    const auto c = b->t.event_create(d->target, flags, &w->target);
    if (c != XAL_SUCCESS) return c;
    *out = reinterpret_cast<xal_bevent_t*>(b->events.add(std::move(w)));
    return XAL_SUCCESS;
  });
}

xal_status_t fault_event_destroy(xal_bevent_t* event) {
  FaultEvent* w = as_fault(event);
  FaultBackend* b = w->device->backend;
  return guarded(FaultEntry{b}, "event_destroy", [&] {
    const auto s = b->before(Op::event_destroy, w->device, nullptr,
                             std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    // As stream_destroy: a failed destroy keeps the wrapper.
    if (!w->dead.load()) {
      const auto d = b->t.event_destroy(w->target);
      if (d != XAL_SUCCESS) return d;
    }
    b->events.take(w);  // frees the wrapper
    return XAL_SUCCESS;
  });
}

xal_status_t fault_event_record(xal_bevent_t* event, xal_bstream_t* stream) {
  FaultEvent* e = as_fault(event);
  FaultStream* w = as_fault(stream);
  FaultBackend* b = e->device->backend;
  return guarded(FaultEntry{b}, "event_record", [&] {
    if (e->dead.load()) return dead(b, "event");
    if (w->dead.load()) return dead(b, "stream");
    const auto s = b->before(Op::event_record, w->device, e->device,
                             std::nullopt, 0, nullptr, nullptr, w);
    if (s != XAL_SUCCESS) return s;
    const auto r = b->t.event_record(e->target, w->target);
    if (r == XAL_SUCCESS) e->recorded_on.store(w);
    return r;
  });
}

xal_status_t fault_stream_wait_event(xal_bstream_t* stream,
                                     xal_bevent_t* event) {
  FaultEvent* e = as_fault(event);
  FaultStream* w = as_fault(stream);
  FaultBackend* b = w->device->backend;
  return guarded(FaultEntry{b}, "stream_wait_event", [&] {
    if (e->dead.load()) return dead(b, "event");
    if (w->dead.load()) return dead(b, "stream");
    const auto s = b->before(Op::stream_wait_event, w->device, e->device,
                             std::nullopt, 0, nullptr, nullptr, w);
    if (s != XAL_SUCCESS) return s;
    return b->t.stream_wait_event(w->target, e->target);
  });
}

template <Op kOp, xal_status_t (*xal_backend_table_t::*kEntry)(xal_bevent_t*)>
xal_status_t event_call(xal_bevent_t* event) {
  FaultEvent* e = as_fault(event);
  FaultBackend* b = e->device->backend;
  return guarded(FaultEntry{b}, op_name(kOp).data(), [&] {
    if (e->dead.load()) return dead(b, "event");
    const auto s = b->before(kOp, e->device, nullptr, std::nullopt, 0, nullptr,
                             nullptr, e->recorded_on.load());
    if (s != XAL_SUCCESS) return s;
    return (b->t.*kEntry)(e->target);
  });
}

xal_status_t fault_event_elapsed_ms(xal_bevent_t* start, xal_bevent_t* end,
                                    float* out_ms) {
  FaultEvent* a = as_fault(start);
  FaultEvent* z = as_fault(end);
  FaultBackend* b = a->device->backend;
  return guarded(FaultEntry{b}, "event_elapsed_ms", [&] {
    if (a->dead.load() || z->dead.load()) return dead(b, "event");
    const auto s = b->before(Op::event_elapsed_ms, a->device, z->device,
                             std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    return b->t.event_elapsed_ms(a->target, z->target, out_ms);
  });
}

}  // namespace

void fill_stream_entries(xal_backend_table_t& t) {
  t.stream_create = fault_stream_create;
  t.stream_destroy = fault_stream_destroy;
  t.stream_synchronize =
      stream_call<Op::stream_synchronize, &xal_backend_table_t::stream_synchronize>;
  t.stream_query = stream_call<Op::stream_query, &xal_backend_table_t::stream_query>;
  t.stream_enqueue_host_func = fault_stream_enqueue_host_func;
  t.memcpy_htod = fault_memcpy_htod;
  t.memcpy_dtoh = fault_memcpy_dtoh;
  t.memcpy_dtod = fault_memcpy_dtod;
  t.memcpy_peer = fault_memcpy_peer;
  t.memset = fault_memset;
  t.event_create = fault_event_create;
  t.event_destroy = fault_event_destroy;
  t.event_record = fault_event_record;
  t.stream_wait_event = fault_stream_wait_event;
  t.event_synchronize =
      event_call<Op::event_synchronize, &xal_backend_table_t::event_synchronize>;
  t.event_query = event_call<Op::event_query, &xal_backend_table_t::event_query>;
  t.event_elapsed_ms = fault_event_elapsed_ms;
}

}  // namespace xal::fault
