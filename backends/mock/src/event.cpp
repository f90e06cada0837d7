// The event object (event.h) and the event entries (entries.h).
#include "event.h"

#include "entries.h"

namespace xal::mock {

void Event::State::mark_done(uint64_t generation, Clock::time_point now) {
  if (done(generation)) return;  // completed already, or forgotten by reset
  if (generation > stamped) {
    stamped = generation;
    stamp = now;
  }
  done_above.insert(generation);
  // Fold the completed run just above done_upto, so the set holds only
  // records completed ahead of an earlier one.
  auto it = done_above.begin();
  while (it != done_above.end() && *it == done_upto + 1) {
    ++done_upto;
    it = done_above.erase(it);
  }
}

Event::Event(Device& device, uint32_t flags)
    : device_(device), flags_(flags),
      state_(std::make_shared<State>()) {}

void Event::record(Stream& stream) {
  // Holding the event's lock while queuing keeps generations in queue order
  // (the worker takes the stream lock and this lock never together).
  std::lock_guard lock(state_->mutex);
  const uint64_t generation = state_->recorded + 1;
  stream.enqueue({[state = state_, generation] {
                    const Clock::time_point now = Clock::now();
                    {
                      std::lock_guard l(state->mutex);
                      state->mark_done(generation, now);
                    }
                    state->cv.notify_all();
                  },
                  false});
  state_->recorded = generation;
}

void Event::make_wait(Stream& stream) {
  uint64_t generation;
  {
    std::lock_guard lock(state_->mutex);
    generation = state_->recorded;
  }
  if (generation == 0) return;  // never recorded: nothing to wait for
  stream.enqueue({[state = state_, generation] {
                    std::unique_lock l(state->mutex);
                    state->cv.wait(l, [&] { return state->done(generation); });
                  },
                  false});
}

void Event::synchronize() {
  std::unique_lock lock(state_->mutex);
  const uint64_t generation = state_->recorded;
  state_->cv.wait(lock, [&] { return state_->done(generation); });
}

bool Event::complete() const {
  std::lock_guard lock(state_->mutex);
  return state_->done(state_->recorded);
}

Event::Stamp Event::timestamp(Clock::time_point* out) const {
  std::lock_guard lock(state_->mutex);
  if (state_->recorded == state_->reset_at) return Stamp::kNeverRecorded;
  if (!state_->done(state_->recorded)) return Stamp::kPending;
  *out = state_->stamp;
  return Stamp::kReady;
}

void Event::reset() {
  {
    std::lock_guard lock(state_->mutex);
    // Generations keep counting; every record so far counts as completed,
    // so that waits queued elsewhere finish.
    state_->done_upto = state_->reset_at = state_->stamped = state_->recorded;
    state_->done_above.clear();
    state_->stamp = {};
  }
  state_->cv.notify_all();
}

// Entries (entries.h).

xal_status_t event_create(xal_bdevice_t* device, uint32_t flags, xal_bevent_t** out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "event_create", [&] {
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
  return guarded(Entry{services_of(&d)}, "event_destroy", [&] {
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
  return guarded(Entry{services_of(&e)}, "event_record", [&] {
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
  return guarded(Entry{services_of(&s)}, "stream_wait_event", [&] {
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
  return guarded(Entry{services_of(&e)}, "event_synchronize", [&] {
    e.synchronize();
    return XAL_SUCCESS;
  });
}

xal_status_t event_query(xal_bevent_t* event) {
  XAL_MOCK_REQUIRE_HANDLE(event);
  Event& e = *as_event(event);
  return guarded(Entry{services_of(&e)}, "event_query", [&] {
    return e.complete() ? XAL_SUCCESS : XAL_NOT_READY;
  });
}

xal_status_t event_elapsed_ms(xal_bevent_t* start, xal_bevent_t* end, float* out_ms) {
  XAL_MOCK_REQUIRE_HANDLE(start);
  XAL_MOCK_REQUIRE_HANDLE(end);
  Event& a = *as_event(start);
  Event& b = *as_event(end);
  return guarded(Entry{services_of(&a)}, "event_elapsed_ms", [&] {
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

}  // namespace xal::mock
