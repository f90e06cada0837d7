// Token bucket of a partition's compute share.
#include "compute_share.hpp"

#include <algorithm>
#include <thread>
#include <utility>

#include "error.hpp"

namespace xal::core {

namespace {

// Credit kept at most: a few ops' worth, so that a partition that was idle
// does not then run far above its share.
constexpr double kBurstSeconds = 0.005;
// Debt kept at most, and the longest a submit waits: work whose completion
// is never seen (a stream in a sticky error) cannot block submits for good.
constexpr double kMaxDebtSeconds = 1.0;
constexpr auto kMaxWait = std::chrono::seconds(2);
// Longest single sleep of a waiting submit (it then looks again).
constexpr auto kMaxSleep = std::chrono::milliseconds(20);
// The same in nanoseconds, for a job's bucket.
constexpr auto kBurstNs = static_cast<int64_t>(kBurstSeconds * 1e9);
constexpr auto kMaxDebtNs = static_cast<int64_t>(kMaxDebtSeconds * 1e9);

int64_t steady_ns(ComputeShare::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch())
      .count();
}

thread_local bool t_submit_deferred = false;

uint64_t ns_between(ComputeShare::Clock::time_point a,
                    ComputeShare::Clock::time_point b) {
  return b > a ? static_cast<uint64_t>(
                     std::chrono::duration_cast<std::chrono::nanoseconds>(b - a)
                         .count())
               : 0;
}

}  // namespace

void note_submit_deferred() noexcept { t_submit_deferred = true; }

bool take_submit_deferred() noexcept {
  return std::exchange(t_submit_deferred, false);
}

ComputeShare::ComputeShare(uint32_t percent)
    : percent_(std::clamp<uint32_t>(percent, 1, 100)),
      rate_(percent_ / 100.0),
      burst_s_(kBurstSeconds),
      credit_s_(kBurstSeconds),
      settled_at_(Clock::now()),
      window_start_(settled_at_) {}

void ComputeShare::settle(Clock::time_point now) {
  const uint64_t wall = ns_between(settled_at_, now);
  const uint64_t busy = in_flight_ ? wall : 0;
  busy_ns_ += busy;
  if (bucket_)
    bucket_charge(*bucket_, steady_ns(now), busy, rate_, kBurstNs, kMaxDebtNs);
  else
    credit_s_ = std::clamp(credit_s_ + (rate_ * wall - busy) * 1e-9,
                           -kMaxDebtSeconds, burst_s_);
  settled_at_ = std::max(settled_at_, now);
}

void ComputeShare::admit() {
  if (percent_ >= 100) return;
  const auto give_up = Clock::now() + kMaxWait;
  for (;;) {
    double wait_s;
    {
      std::lock_guard lock(mu_);
      const auto now = Clock::now();
      settle(now);
      if (now >= give_up) return;
      // The job's debt is in wall time already; this process's own, in
      // device time, returns at `rate_`.
      const double debt_s = bucket_ ? 1e-9 * static_cast<double>(
                                                 bucket_debt_ns(*bucket_, steady_ns(now)))
                                    : -credit_s_ / rate_;
      if (debt_s <= 0) return;
      // Idle: wait the debt out; busy: look again shortly.
      wait_s = in_flight_ ? 0.001 : debt_s;
    }
    const auto wait = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(wait_s));
    std::this_thread::sleep_for(std::min<Clock::duration>(wait, kMaxSleep));
  }
}

void ComputeShare::set_bucket(SharedBucket* bucket) noexcept {
  std::lock_guard lock(mu_);
  settle(Clock::now());  // what ran so far is this process's own
  bucket_ = bucket;
  resolved_.store(true, std::memory_order_release);
}

void ComputeShare::begin() {
  std::lock_guard lock(mu_);
  settle(Clock::now());
  ++in_flight_;
}

void ComputeShare::submitted(StreamObj* stream) {
  const xal_backend_table_t* t = stream->hdr.table;
  if (t->stream_enqueue_host_func &&
      t->stream_enqueue_host_func(stream->native, &ComputeShare::complete_cb,
                                  this) == XAL_SUCCESS)
    return;
  clear_pending();
  // No host function: the op's end is observed here.
  if (t->stream_synchronize(stream->native) != XAL_SUCCESS) clear_pending();
  complete();
}

void ComputeShare::complete_cb(void* self) noexcept {
  static_cast<ComputeShare*>(self)->complete();
}

void ComputeShare::complete() noexcept {
  std::lock_guard lock(mu_);
  settle(Clock::now());
  if (in_flight_) --in_flight_;
}

uint64_t ComputeShare::busy_ns() {
  std::lock_guard lock(mu_);
  settle(Clock::now());
  return busy_ns_;
}

double ComputeShare::utilization() {
  std::lock_guard lock(mu_);
  const auto now = Clock::now();
  settle(now);
  const uint64_t wall = ns_between(window_start_, now);
  const uint64_t busy = busy_ns_ - window_busy_ns_;
  window_start_ = now;
  window_busy_ns_ = busy_ns_;
  if (wall == 0) return 0.0;
  return std::min(100.0, 100.0 * static_cast<double>(busy) /
                             static_cast<double>(wall));
}

}  // namespace xal::core
