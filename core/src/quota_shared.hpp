// Quotas shared by the processes of one job: binds the runtime's devices to
// the shared quota ledger named by XAL_QUOTA_LEDGER (off when unset; off,
// each hook costs one atomic load).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "quota_ledger.hpp"
#include "runtime.hpp"

namespace xal::core {

// Opens the ledger named by XAL_QUOTA_LEDGER for rt's devices and publishes
// their limits. A bad name or an incompatible ledger: a warning, and the
// ledger stays off. Called by xal_init (serialised).
void shared_quota_open(Runtime& rt);
// Closes the ledger; this process's entries go. Called by xal_shutdown, not
// concurrently with other calls.
void shared_quota_close() noexcept;
// Name of the open ledger, "" when off. Same rules as shared_quota_close.
const char* shared_quota_name() noexcept;

// After the local quota check: OUT_OF_MEMORY (with the job-wide use) when
// `bytes` more would pass the limit in force. Thread-safe.
xal_status_t shared_quota_reserve(DeviceObj* device, uint64_t bytes);
// Takes back a reservation. Thread-safe.
void shared_quota_release(DeviceObj* device, uint64_t bytes) noexcept;
// This process's use of `device` back to 0 (its allocations were freed by a
// reset or teardown). Thread-safe.
void shared_quota_reset(DeviceObj* device) noexcept;
// Removes this process's entry of `device`, its limit too (the device is
// going away: an undone partition). Thread-safe.
void shared_quota_drop(DeviceObj* device) noexcept;
// Records this process's new limit; OUT_OF_MEMORY when the job already uses
// more than `bytes` (0 removes the limit), checked and recorded under one
// lock of the ledger. `commit` changes the process's own limit: it runs under
// that lock (at once when the ledger is off for the device); when it returns
// false the ledger is left as it was and the call returns success (the
// caller reports the refusal). Thread-safe.
xal_status_t shared_quota_set_limit(DeviceObj* device, uint64_t bytes,
                                    const std::function<bool()>& commit);
// Job-wide figures of `device`; false when the ledger is off for it.
// Thread-safe.
bool shared_quota_usage(DeviceObj* device, LedgerUsage* out);
// The job's processes on `device`; false when the ledger is off for it.
// Thread-safe.
bool shared_quota_processes(DeviceObj* device, std::vector<LedgerProcess>* out);

}  // namespace xal::core
