// The cross-process ledger's compute shares and usage: attaching to a slot's
// bucket, publishing a process's usage, and the rows tools read (see
// quota_ledger.hpp).
#include <algorithm>
#include <chrono>
#include <cstring>

#include "quota_ledger.hpp"

namespace xal::core {

using namespace ledger_layout;

namespace {

// Utilization windows last about this long; a window not moved on for
// kStaleNs (nobody of the job publishes any more) reads as idle.
constexpr uint64_t kWindowNs = 1'000'000'000ull;
constexpr uint64_t kStaleNs = 2'500'000'000ull;

uint32_t used_entries(const DeviceSlot& d) noexcept {
  return std::min(d.high_water, kMaxProcesses);
}

// Moves `w` on to `now` when its window is over, for a busy time of `busy`.
void advance(UsageWindow& w, uint64_t busy, uint64_t now) noexcept {
  if (w.start_ns == 0 || now < w.start_ns || busy < w.start_busy_ns) {
    w = {now, busy, 0};
    return;
  }
  const uint64_t wall = now - w.start_ns;
  if (wall < kWindowNs) return;
  const uint64_t ran = std::min(busy - w.start_busy_ns, wall);
  w = {now, busy, static_cast<uint64_t>(1e6 * static_cast<double>(ran) /
                                        static_cast<double>(wall))};
}

void add(ProcessUsage& to, const ProcessUsage& u) noexcept {
  to.busy_ns += u.busy_ns;
  to.bytes_copied += u.bytes_copied;
  to.collective_calls += u.collective_calls;
  to.collective_bytes += u.collective_bytes;
  to.allocations += u.allocations;
  to.errors += u.errors;
}

}  // namespace

double window_percent(const UsageWindow& w, uint64_t now) noexcept {
  if (w.start_ns == 0 || now > w.start_ns + kStaleNs) return 0.0;
  return static_cast<double>(w.ratio_ppm) / 1e4;
}

uint64_t monotonic_ns() noexcept {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

SharedBucket* QuotaLedger::attach(int handle, uint32_t percent) {
  Guard g(*this);
  refresh_identity();
  const int slot = index_of(handle);
  if (slot < 0) return nullptr;
  ProcessEntry* e = own_entry(slot, true);
  if (!e) return nullptr;
  e->flags |= kEntryActive;
  SharedBucket& b = file_->slots[slot].bucket;
  b.percent.store(percent, std::memory_order_relaxed);
  return &b;
}

void QuotaLedger::publish(int handle, const ProcessUsage& usage, uint64_t now_ns) {
  Guard g(*this);
  refresh_identity();
  const int slot = index_of(handle);
  if (slot < 0) return;
  DeviceSlot& d = file_->slots[slot];
  if (ProcessEntry* e = own_entry(slot, false)) {
    e->usage = usage;
    advance(e->window, usage.busy_ns, now_ns);
  }
  // The job's device time: its bucket's on a partition; on a whole card (no
  // bucket to draw from) the sum of its live processes' device times.
  uint64_t job_busy = d.bucket.busy_ns.load(std::memory_order_relaxed);
  if (d.bucket.percent.load(std::memory_order_relaxed) == 0) {
    uint64_t sum = 0;
    for (uint32_t i = 0; i < used_entries(d); ++i)
      if (d.processes[i].pid != 0) sum += d.processes[i].usage.busy_ns;
    job_busy = std::max(job_busy, sum);
  }
  advance(d.window, job_busy, now_ns);
  reclaim_slot(slot);
}

std::vector<LedgerRow> QuotaLedger::rows(uint64_t now_ns) {
  Guard g(*this);
  refresh_identity();
  std::vector<LedgerRow> out;
  for (uint32_t s = 0; s < kMaxDevices; ++s) {
    DeviceSlot& d = file_->slots[s];
    if (!d.in_use) continue;
    reclaim_slot(static_cast<int>(s));
    const LedgerUsage u = sum(static_cast<int>(s));
    if (u.processes == 0) continue;
    LedgerRow job;
    std::copy(std::begin(d.uuid), std::end(d.uuid), job.uuid.begin());
    job.label.assign(d.label, strnlen(d.label, sizeof d.label));
    job.percent = d.bucket.percent.load(std::memory_order_relaxed);
    job.processes = u.processes;
    job.bytes = u.used;
    job.limit = u.limit;
    job.utilization = window_percent(d.window, now_ns);
    const size_t job_at = out.size();
    out.push_back(job);
    for (uint32_t i = 0; i < used_entries(d); ++i) {
      const ProcessEntry& e = d.processes[i];
      if (e.pid == 0) continue;
      LedgerRow row = job;
      row.pid = e.pid;
      row.processes = 1;
      row.bytes = e.bytes;
      row.limit = e.limit;
      row.usage = e.usage;
      row.utilization = window_percent(e.window, now_ns);
      add(out[job_at].usage, e.usage);
      out.push_back(row);
    }
    // The job's device time counts every process that drew from the share,
    // also those that have ended.
    out[job_at].usage.busy_ns = std::max(
        out[job_at].usage.busy_ns, d.bucket.busy_ns.load(std::memory_order_relaxed));
  }
  return out;
}

}  // namespace xal::core
