// Shared by every xal-bench subcommand: an xal session per benchmark run,
// error reporting into Google Benchmark, and paired timing of two calls.
#pragma once

#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "xal/xal.h"

namespace xal::bench {

// xal_init on construction, xal_shutdown on destruction. `validation` is
// 0 (off) or 1 (on). Backends: XAL_BACKENDS when set, else "mock".
// Not thread-safe: one session at a time in the process.
class Session {
 public:
  // Returns nullptr and skips `state` with the reason when init fails or
  // there is no device.
  static std::unique_ptr<Session> open(benchmark::State& state,
                                       int validation);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  xal_device_t device() const { return device_; }

 private:
  struct Key {};  // only open() makes sessions

 public:
  explicit Session(Key) {}

 private:
  bool initialised_ = false;
  xal_device_t device_ = nullptr;
};

// "XAL_ERROR_...: message" of the calling thread's last error.
std::string error_text(xal_status_t status);

// Skips `state` with `what` and xal's error detail, and remembers that a
// benchmark failed (see any_failed). Returns false for `if (!ok(...))`.
bool ok(benchmark::State& state, xal_status_t status, const char* what);

// Skips `state` with a message and remembers the failure.
void fail(benchmark::State& state, const std::string& message);

// True when some benchmark failed in this process; xal-bench then exits 1.
bool any_failed();

// CPU time of the calling thread, as a chrono clock: work done on this
// thread, unaffected by other processes on a loaded machine.
struct ThreadCpuClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<ThreadCpuClock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(duration(ts.tv_sec * 1000000000LL + ts.tv_nsec));
  }
};

// CPU time of the whole process (every thread, the backend's workers too).
struct ProcessCpuClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<ProcessCpuClock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return time_point(duration(ts.tv_sec * 1000000000LL + ts.tv_nsec));
  }
};

// Times `fn` called `calls` times on `Clock`; nanoseconds per call.
template <typename Clock = std::chrono::steady_clock, typename Fn>
double ns_per_call(Fn&& fn, int64_t calls) {
  const auto start = Clock::now();
  for (int64_t i = 0; i < calls; ++i) {
    fn();
  }
  const auto stop = Clock::now();
  return std::chrono::duration<double, std::nano>(stop - start).count() /
         static_cast<double>(calls);
}

// Times `a` and `b` in alternating rounds and keeps each one's best round,
// so that both see the same machine load. Nanoseconds per call.
struct PairTiming {
  double a_ns = 0;
  double b_ns = 0;
};
template <typename Clock = std::chrono::steady_clock, typename A, typename B>
PairTiming time_pair(A&& a, B&& b, int64_t calls_per_round, int rounds) {
  PairTiming best{1e300, 1e300};
  for (int r = 0; r < rounds; ++r) {
    best.a_ns = std::min(best.a_ns, ns_per_call<Clock>(a, calls_per_round));
    best.b_ns = std::min(best.b_ns, ns_per_call<Clock>(b, calls_per_round));
  }
  return best;
}

}  // namespace xal::bench
