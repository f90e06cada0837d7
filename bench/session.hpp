// Shared by every xal-bench subcommand: the process's xal session, error
// reporting into Google Benchmark, figures measured once per reported run,
// and paired timing of two calls.
#pragma once

#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "xal/xal.h"

namespace xal::bench {

// The process's xal session: xal_init on first use, then kept for the
// following cases; xal_shutdown when a case asks for the other validation
// setting, after a case failed (so the next one starts clean), or at
// close(), which main() calls after the benchmarks. Google Benchmark calls a
// case's function once per iteration count it tries (about 7 times for a
// cheap call) and a real driver takes a noticeable time to make and destroy
// a context, so a session per call made a short run on a GPU take tens of
// seconds. `validation` is 0 (off) or 1 (on). Backends: XAL_BACKENDS when
// set, else "mock".
// Not thread-safe: benchmark functions run one at a time, on one thread.
class Session {
 public:
  // The open session with `validation`, opening it when needed. Returns
  // nullptr and skips `state` with the reason when init fails or there is
  // no device. The session stays owned here; valid until the next acquire
  // or close.
  static const Session* acquire(benchmark::State& state, int validation);
  // Shuts the open session down, if any.
  static void close();
  // How many sessions this process has opened (xal-bench prints it).
  static int opened();

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  xal_device_t device() const { return device_; }

 private:
  struct Key {};  // only acquire() makes sessions

 public:
  Session(Key, int validation) : validation_(validation) {}

 private:
  int validation_ = 0;  // as given to xal_init
  bool initialised_ = false;
  xal_device_t device_ = nullptr;
};

// Figures a case measures itself, besides Google Benchmark's loop (the
// alternating rounds of time_pair and the like), kept across the calls
// that make one reported run. Google Benchmark calls a case's function with
// growing iteration counts until the time is long enough and reports the
// last call; each further --benchmark_repetitions is one more call with
// that same count. So the figures are measured on a case's first call and
// again whenever the iteration count does not grow (a new repetition):
// every reported run has figures of its own, and the calls that only settle
// the count do not repeat the rounds. Keyed by the case's name.
// Not thread-safe (benchmarks run one at a time).
class RoundsCache {
 public:
  // Sets `state`'s counters from the kept figures of case `name`, running
  // `measure` (bool(benchmark::UserCounters*); false when it failed, and
  // then nothing is kept or set) when the case has none for this run.
  template <typename Measure>
  void apply(benchmark::State& state, const std::string& name,
             Measure&& measure);

  // How many times `measure` ran in this process (xal-bench prints it).
  static int measured() { return measured_; }

 private:
  struct Entry {
    int64_t iterations = 0;  // the count of the call that measured or reused
    benchmark::UserCounters counters;
  };
  std::map<std::string, Entry> entries_;
  static inline int measured_ = 0;
};

template <typename Measure>
void RoundsCache::apply(benchmark::State& state, const std::string& name,
                        Measure&& measure) {
  const int64_t count = static_cast<int64_t>(state.max_iterations);
  auto it = entries_.find(name);
  if (it == entries_.end() || count <= it->second.iterations) {
    benchmark::UserCounters counters;
    ++measured_;
    if (!measure(&counters)) {
      if (it != entries_.end()) {
        entries_.erase(it);
      }
      return;
    }
    it = entries_.insert_or_assign(name, Entry{count, std::move(counters)})
             .first;
  }
  it->second.iterations = count;
  for (const auto& [key, counter] : it->second.counters) {
    state.counters[key] = counter;
  }
}

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
