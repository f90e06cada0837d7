// Utilization, power and temperature of a simulated device.
//
// Model (README.md): utilization is the busy time of the device's streams
// (copies, memsets, kernels; concurrent streams add up, capped at 100%) over
// the last kUtilizationWindow. power = idle_w + utilization * (tdp_w -
// idle_w); temperature = 25 C + power * (60 C / tdp_w), so a card at full
// load sits at 85 C. Energy integrates the same power model since the
// device was created: idle_w * elapsed + (tdp_w - idle_w) * busy seconds,
// where busy seconds are the time at least one stream ran device work (the
// union of the busy intervals, so concurrent streams never push the
// average power past tdp_w).
#pragma once

#include <chrono>
#include <array>
#include <cstdint>
#include <mutex>

namespace xal::mock {

inline constexpr std::chrono::milliseconds kUtilizationWindow{1000};
inline constexpr double kAmbientC = 25.0;
inline constexpr double kFullLoadRiseC = 60.0;

// Busy time of a device's streams, kept in kBucket-wide time buckets over
// the last window (constant memory, whatever the rate of tasks), and the
// total time at least one task ran (from begin/end: a count of the tasks
// running). Thread-safe.
class BusyTracker {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Clock::duration kBucket = std::chrono::milliseconds(10);
  static constexpr size_t kBuckets = 128;  // > window / bucket

  // A task of device work starts at `start`; every begin is followed by
  // one end with the same start.
  void begin(Clock::time_point start);
  // The task that began at `start` ended at `end`: [start, end] goes into
  // the window buckets, and the busy stretch ends when no task runs.
  void end(Clock::time_point start, Clock::time_point end);
  // Busy seconds of completed intervals inside [now - window, now]
  // (to one bucket's accuracy at the old edge).
  double busy_in_window(Clock::time_point now) const;
  // Seconds up to `now` during which at least one task ran (the union of
  // the busy intervals, the running ones included). Calls whose times are
  // slightly out of order (threads racing) are taken in the order they
  // come: the total never counts one instant twice.
  double total_busy_seconds(Clock::time_point now) const;
  // Forgets the window (device reset); the total stays.
  void clear();

 private:
  struct Bucket {
    int64_t index = -1;  // time / kBucket
    double busy = 0.0;   // seconds
  };
  mutable std::mutex mutex_;
  std::array<Bucket, kBuckets> buckets_{};
  uint32_t running_ = 0;               // tasks begun and not ended
  Clock::time_point running_since_{};  // start of the current busy stretch
  Clock::time_point counted_until_{};  // the total covers everything before
  double total_ = 0.0;                 // seconds of finished busy stretches
};

struct PowerModel {
  double idle_w = 0.0;
  double tdp_w = 0.0;
  double power(double utilization) const {
    return idle_w + utilization * (tdp_w - idle_w);
  }
  double temperature(double power_w) const {
    return tdp_w > 0 ? kAmbientC + power_w * (kFullLoadRiseC / tdp_w)
                     : kAmbientC;
  }
};

}  // namespace xal::mock
