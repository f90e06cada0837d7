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

#include "stream.hpp"

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
  struct State {
    mutable std::mutex mutex;
    std::condition_variable cv;
    uint64_t recorded = 0;   // generation of the latest record
    uint64_t completed = 0;  // generation of the latest completed record
    uint64_t reset_at = 0;   // `recorded` at the last reset: none since
    Clock::time_point stamp{};
  };
  Device& device_;
  const uint32_t flags_;
  // Shared with the markers still queued, which may outlive the event.
  std::shared_ptr<State> state_;
};

}  // namespace xal::mock
