// Event: marks a point in a stream. record() queues a marker; when the
// stream reaches it the event completes and takes a steady_clock timestamp.
// Each record has a generation number, so waits and queries always refer to
// the latest record made before them (as CUDA events do).
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>

#include "stream_worker.h"

namespace xal::mock {

class Event {
 public:
  using Clock = std::chrono::steady_clock;

  Event(Device& device, uint32_t flags);

  Device& device() const { return device_; }
  bool timing_enabled() const { return !(flags_ & XAL_EVENT_DISABLE_TIMING); }

  // Queues the marker on `stream`. Throws std::bad_alloc.
  void record(Stream& stream);
  // Makes later work on `stream` wait for the latest record (no-op if the
  // event was never recorded).
  void make_wait(Stream& stream);
  // Blocks until the latest record has completed.
  void synchronize();
  // True when the latest record has completed (or there was none).
  bool complete() const;
  // Recorded at least once and complete: fills the timestamp.
  enum class Stamp { kNeverRecorded, kPending, kReady };
  Stamp timestamp(Clock::time_point* out) const;
  // Forgets every record (device reset; the device's streams are drained).
  void reset();

 private:
  // Records complete out of order when they are on different streams, so
  // completion is kept per generation: every generation up to done_upto has
  // completed, and so has each one in done_above. A wait or synchronize
  // thus waits for its own record, never for "some later one".
  struct State {
    mutable std::mutex mutex;
    std::condition_variable cv;
    uint64_t recorded = 0;        // generation of the latest record
    uint64_t done_upto = 0;       // every generation <= this has completed
    std::set<uint64_t> done_above;  // completed generations > done_upto
    uint64_t reset_at = 0;        // `recorded` at the last reset: none since
    uint64_t stamped = 0;         // generation `stamp` belongs to
    Clock::time_point stamp{};

    // Callers hold `mutex`.
    bool done(uint64_t generation) const {
      return generation <= done_upto || done_above.count(generation) != 0;
    }
    void mark_done(uint64_t generation, Clock::time_point now);
  };
  Device& device_;
  const uint32_t flags_;
  // Shared with the markers still queued, which may outlive the event.
  std::shared_ptr<State> state_;
};

}  // namespace xal::mock
