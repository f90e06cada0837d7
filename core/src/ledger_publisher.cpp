// The ledger's publisher thread (see ledger_publisher.hpp).
#include "ledger_publisher.hpp"

#include <chrono>

#include "compute_share.hpp"
#include "runtime.hpp"

namespace xal::core {

namespace {

constexpr auto kPeriod = std::chrono::milliseconds(100);

ledger_layout::ProcessUsage usage_of(DeviceObj* d) {
  const Counters& c = d->state->counters;
  ledger_layout::ProcessUsage u{};
  u.bytes_copied = c.bytes_htod.load() + c.bytes_dtoh.load() + c.bytes_dtod.load() +
                   c.bytes_peer.load();
  u.collective_calls = c.collective_calls.load();
  u.collective_bytes = c.collective_bytes.load();
  u.allocations = c.alloc_count_current.load();
  for (int i = 1; i < XAL_STATUS_COUNT; ++i) u.errors += c.errors[i].load();
  if (ComputeShare* share = d->state->share) u.busy_ns = share->busy_ns();
  return u;
}

}  // namespace

LedgerPublisher::LedgerPublisher(QuotaLedger& ledger)
    : ledger_(ledger), thread_([this] { run(); }) {}

LedgerPublisher::~LedgerPublisher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void LedgerPublisher::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, kPeriod, [this] { return stop_; });
    lock.unlock();
    try {
      publish_all();
    } catch (...) {
      // A ledger that cannot be locked: the next round tries again.
    }
    lock.lock();
  }
}

void LedgerPublisher::publish_all() {
  // The runtime's devices stay while held; partitions come and go under
  // partition_mu (taken before the ledger's lock, as remove_partitions does).
  const RuntimeHold hold;
  Runtime* rt = hold.get();
  if (!rt) return;
  std::lock_guard lock(rt->partition_mu);
  const uint64_t now = monotonic_ns();
  for (DeviceObj* d : rt->devices) {
    const int slot = d->state->ledger_slot.load(std::memory_order_acquire);
    if (slot >= 0) ledger_.publish(slot, usage_of(d), now);
  }
}

}  // namespace xal::core
