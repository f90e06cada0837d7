// The token bucket of a compute share, kept in shared memory so that every
// process of a job on a partition draws from one bucket (the shared quota
// ledger holds one per device slot; see quota_ledger.hpp).
//
// Lock-free, one word of state: `paid_until_ns` is a virtual clock on
// CLOCK_MONOTONIC (std::chrono::steady_clock, the same in every process of
// the host). The bucket's credit at time t, in device nanoseconds, is
// rate x (t - paid_until), at most the burst: charging `busy` device
// nanoseconds moves the clock on by busy / rate. A process killed at any
// point leaves the word consistent (a compare-and-swap either happened or
// did not), so nothing needs recovering: its share simply stops being drawn.
// This file depends on nothing else of the core.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace xal::core {

struct SharedBucket {
  std::atomic<int64_t> paid_until_ns;  // 0: never charged (a full burst)
  std::atomic<uint64_t> busy_ns;       // device time charged, all processes
  std::atomic<uint32_t> percent;       // the share, as its users gave it
  uint32_t reserved0;
};
static_assert(std::atomic<int64_t>::is_always_lock_free);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// Charges `busy` device nanoseconds at `now` to a bucket that fills at
// `rate` (device seconds per wall second, > 0), keeps at most `burst_ns` of
// credit and at most `max_debt_ns` of debt (device nanoseconds).
inline void bucket_charge(SharedBucket& b, int64_t now, uint64_t busy, double rate,
                          int64_t burst_ns, int64_t max_debt_ns) noexcept {
  if (busy == 0) return;
  const auto full = static_cast<int64_t>(static_cast<double>(burst_ns) / rate);
  const auto cost = static_cast<int64_t>(static_cast<double>(busy) / rate);
  const auto most = static_cast<int64_t>(static_cast<double>(max_debt_ns) / rate);
  int64_t seen = b.paid_until_ns.load(std::memory_order_relaxed);
  int64_t next;
  do {
    next = std::min(std::max(seen, now - full) + cost, now + most);
  } while (!b.paid_until_ns.compare_exchange_weak(seen, next, std::memory_order_relaxed));
  b.busy_ns.fetch_add(busy, std::memory_order_relaxed);
}

// Wall nanoseconds until the bucket's credit is back to 0; 0 when it is
// not in debt at `now`.
inline int64_t bucket_debt_ns(const SharedBucket& b, int64_t now) noexcept {
  const int64_t paid = b.paid_until_ns.load(std::memory_order_relaxed);
  return paid > now ? paid - now : 0;
}

}  // namespace xal::core
