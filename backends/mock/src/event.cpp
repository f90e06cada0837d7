#include "event.hpp"

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

}  // namespace xal::mock
