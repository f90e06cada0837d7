// The compute share of a partition: a token bucket on the device time of the
// work submitted to its streams (launches, copies, memsets, collectives), as
// HAMi-core throttles kernel launches to a share of the SMs.
//
// Credit grows at share x wall-clock time, up to a small burst; the device
// time of the partition's work is drawn from it: the time during which at
// least one op of the partition is running, measured by a host function
// queued after each op (the op's completion) and, for ops still running, up
// to now. A submit waits on the caller's thread while the credit is
// negative. Whole cards have no ComputeShare: submit_shared is then one
// branch.
//
// With the shared quota ledger (XAL_QUOTA_LEDGER), the credit is the job's:
// at its first submit a partition attaches to its slot's bucket in the
// ledger (shared_bucket.hpp), which every process of the job on the
// partition draws from; device time is then charged to it, and the time
// each process's own work ran still counts in its busy time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "objects.hpp"
#include "shared_bucket.hpp"

namespace xal::core {

class ComputeShare {
 public:
  using Clock = std::chrono::steady_clock;

  // `percent` in 1..100; 100 measures without throttling.
  explicit ComputeShare(uint32_t percent);

  uint32_t percent() const noexcept { return percent_; }

  // Whether the job's bucket has been looked for (set_bucket).
  bool bucket_resolved() const noexcept {
    return resolved_.load(std::memory_order_acquire);
  }
  // Draws from `bucket` from now on (nullptr: this process's own credit).
  // The bucket must outlive this share. Thread-safe.
  void set_bucket(SharedBucket* bucket) noexcept;

  // Waits while the partition is in debt (never when percent is 100).
  // Thread-safe.
  void admit();

  // Counts an op as running from now (before the backend call: a backend
  // may run a small op inline, on the caller's thread). Thread-safe.
  void begin();

  // After begin(): the op was queued on `stream` (of the partition); its
  // completion is observed by a host function on the stream, or, when the
  // backend has none, by a synchronisation here. Thread-safe.
  void submitted(StreamObj* stream);

  // After begin(): the submit failed; nothing was queued. Thread-safe.
  void complete() noexcept;

  // Device time charged so far (work that ran), in nanoseconds.
  uint64_t busy_ns();

  // Percent of wall time the partition's work ran, over the window since the
  // previous call (the first call: since creation). Thread-safe.
  double utilization();

 private:
  static void complete_cb(void* self) noexcept;
  // Credit and busy time brought up to `now`. Needs mu_.
  void settle(Clock::time_point now);

  std::atomic<bool> resolved_{false};
  SharedBucket* bucket_ = nullptr;  // guarded by mu_
  const uint32_t percent_;
  const double rate_;    // credit seconds per wall second
  const double burst_s_; // most credit kept
  std::mutex mu_;
  double credit_s_;
  Clock::time_point settled_at_;
  uint32_t in_flight_ = 0;
  uint64_t busy_ns_ = 0;
  Clock::time_point window_start_;
  uint64_t window_busy_ns_ = 0;
};

// Looks the job's bucket of d's compute share up in the shared quota
// ledger, or settles for the process's own (quota_shared.cpp). Thread-safe.
void shared_compute_attach(DeviceObj* d);

// Attaches the share to the job's bucket at its first submit.
inline ComputeShare* share_of(StreamObj* s) {
  ComputeShare* share = s->device->state->share;
  if (share && !share->bucket_resolved()) shared_compute_attach(s->device);
  return share;
}

// A collective called inside xal_group_start/end is kept for xal_group_end
// (defer_to_group_end), which charges it when it queues it (charge_shared);
// the call itself then charges nothing. defer_to_group_end notes the
// deferral on the calling thread; submit_shared takes the note. Thread-local.
void note_submit_deferred() noexcept;
bool take_submit_deferred() noexcept;

// Counts `submit` (a backend call queueing work on `s`) as running on
// `share` from now, and to its completion when queued; with
// `unless_deferred`, work that the call kept for xal_group_end is not
// charged (charge_shared charges it there).
template <class F>
inline xal_status_t run_charged(ComputeShare& share, StreamObj* s, F&& submit,
                                bool unless_deferred) {
  share.begin();
  xal_status_t st = XAL_ERROR_INTERNAL;
  try {
    st = submit();
  } catch (...) {
    share.complete();
    throw;
  }
  if (st == XAL_SUCCESS && !(unless_deferred && take_submit_deferred())) share.submitted(s);
  else share.complete();
  return st;
}

// Runs `submit` (a backend call queueing work on `s`) as work of the stream's
// partition, if any: counted as running from now, and to its completion
// when queued. No admission wait.
template <class F>
inline xal_status_t charge_shared(StreamObj* s, F&& submit) {
  ComputeShare* share = share_of(s);
  if (!share) return submit();
  return run_charged(*share, s, submit, false);
}

// Runs `submit` (a backend call queueing work on `s`) under the compute share
// of the stream's partition, if any: waits for credit, then charges the work
// (or, kept for xal_group_end, leaves that to charge_shared there).
template <class F>
inline xal_status_t submit_shared(StreamObj* s, F&& submit) {
  ComputeShare* share = share_of(s);
  if (!share) return submit();
  share->admit();
  (void)take_submit_deferred();
  return run_charged(*share, s, submit, true);
}

}  // namespace xal::core
