// Quotas shared by the processes of one job (see quota_shared.hpp).
#include "quota_shared.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "compute_share.hpp"
#include "ledger_publisher.hpp"
#include "partition.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

using xal::common::env;
using xal::common::format_bytes;

namespace {

// DeviceState::ledger_slot: a slot, or one of these. Devices added after
// xal_init (partitions made through the API) are looked up at first use.
constexpr int kUnresolved = -2;  // not looked up yet
constexpr int kUntracked = -1;   // no uuid, or no room in the ledger
// Lookups of a device whose slot handle keeps going stale, at most.
constexpr int kTries = 4;

struct Binding {
  std::unique_ptr<QuotaLedger> ledger;
  std::string name;
  std::unique_ptr<LedgerPublisher> publisher;  // stopped before the ledger goes
};

std::atomic<Binding*> g_binding{nullptr};

int resolve(Binding& b, DeviceObj* d, int seen);

// The binding and d's slot, or nullptr when the ledger is off for d.
Binding* bound(DeviceObj* d, int* slot) {
  Binding* b = g_binding.load(std::memory_order_acquire);
  if (!b) return nullptr;
  *slot = d->state->ledger_slot.load(std::memory_order_acquire);
  if (*slot == kUnresolved) *slot = resolve(*b, d, kUnresolved);
  return *slot >= 0 ? b : nullptr;
}

// Same without a lookup (a device never looked up holds nothing).
Binding* bound_if_known(const DeviceObj* d, int* slot) noexcept {
  Binding* b = g_binding.load(std::memory_order_acquire);
  if (!b) return nullptr;
  *slot = d->state->ledger_slot.load(std::memory_order_acquire);
  return *slot >= 0 ? b : nullptr;
}

// d's uuid and name as xal_device_get_properties gives them (a
// partition's own); false when the backend gives no uuid.
bool uuid_of(DeviceObj* d, DeviceUuid* out, std::string* name) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  p.parent_index = -1;
  if (d->hdr.table->device_get_properties(d->native, &p) != XAL_SUCCESS) {
    clear_pending();
    return false;
  }
  partition_properties(d, &p);
  std::copy(std::begin(p.uuid), std::end(p.uuid), out->begin());
  name->assign(p.name, strnlen(p.name, sizeof p.name));
  return std::any_of(out->begin(), out->end(), [](uint8_t v) { return v != 0; });
}

// Looks d up in the ledger and publishes its limit. Concurrent lookups of
// one device find the same slot. Called again when d's slot handle is stale
// (the slot went to another uuid while this process had no entry in it).
// `seen` is the handle the caller found stale (or kUnresolved): when
// another thread has stored a newer one meanwhile, that one stands.
int resolve(Binding& b, DeviceObj* d, int seen) {
  DeviceUuid uuid{};
  std::string error, label;
  int slot = kUntracked;
  if (!uuid_of(d, &uuid, &label)) {
    log_message(XAL_LOG_WARNING,
                cat("XAL_QUOTA_LEDGER: device ", d->index,
                    " has no uuid; its quota stays per process").c_str());
  } else {
    for (int tries = 0; tries < kTries; ++tries) {
      if ((slot = b.ledger->slot(uuid, &error, label)) < 0) {
        log_message(XAL_LOG_WARNING,
                    cat("XAL_QUOTA_LEDGER: ", error, "; device ", d->index,
                        "'s quota stays per process").c_str());
        break;
      }
      const auto r = b.ledger->publish_limit(slot, d->state->limit);
      if (r == QuotaLedger::SetLimit::kStale) {
        slot = kUntracked;
        continue;
      }
      if (r == QuotaLedger::SetLimit::kNoEntry)
        log_message(XAL_LOG_WARNING,
                    cat("XAL_QUOTA_LEDGER: no free entry for device ", d->index,
                        " in ledger '", b.name, "'").c_str());
      break;
    }
  }
  slot = slot < 0 ? kUntracked : slot;
  if (!d->state->ledger_slot.compare_exchange_strong(seen, slot,
                                                     std::memory_order_acq_rel))
    return seen;  // a concurrent lookup's result, stored first
  return slot;
}

// After a stale handle: d looked up again; nullptr when now untracked.
Binding* rebind(Binding& b, DeviceObj* d, int* slot) {
  *slot = resolve(b, d, *slot);
  return *slot >= 0 ? &b : nullptr;
}

xal_status_t stale_failure(Binding& b, DeviceObj* d) {
  return fail(d, XAL_ERROR_OUT_OF_MEMORY,
              cat("shared quota ledger '", b.name, "': the slot of device ",
                  d->index, " was given to other devices ", kTries,
                  " times in a row (the ledger is full)"));
}

}  // namespace

void shared_quota_open(Runtime& rt) {
  shared_quota_close();
  const auto name = env("XAL_QUOTA_LEDGER");
  if (!name || name->empty()) return;
  std::string error;
  auto b = std::make_unique<Binding>();
  b->name = *name;
  b->ledger = QuotaLedger::open(*name, &error);
  if (!b->ledger) {
    log_message(XAL_LOG_WARNING,
                cat("XAL_QUOTA_LEDGER: ", error,
                    "; quotas stay per process").c_str());
    return;
  }
  for (DeviceObj* d : rt.devices) {
    resolve(*b, d, d->state->ledger_slot.load(std::memory_order_acquire));
    // Whole cards measure the device time of their work (a share of 100%
    // never waits); partitions have their own share.
    if (!d->state->partition && !d->state->share) {
      d->state->card_time = std::make_shared<ComputeShare>(100);
      d->state->share = d->state->card_time.get();
    }
  }
  b->publisher = std::make_unique<LedgerPublisher>(*b->ledger);
  g_binding.store(b.release(), std::memory_order_release);
}

void shared_quota_close() noexcept {
  delete g_binding.exchange(nullptr, std::memory_order_acq_rel);
}

const char* shared_quota_name() noexcept {
  Binding* b = g_binding.load(std::memory_order_acquire);
  return b ? b->name.c_str() : "";
}

xal_status_t shared_quota_reserve(DeviceObj* d, uint64_t bytes) {
  int slot = -1;
  Binding* b = bound(d, &slot);
  LedgerUsage u;
  auto r = QuotaLedger::Reserve::kStale;
  for (int tries = 0; b && r == QuotaLedger::Reserve::kStale; ++tries) {
    if (tries == kTries) return stale_failure(*b, d);
    r = b->ledger->reserve(slot, bytes, d->state->limit, &u);
    if (r == QuotaLedger::Reserve::kStale) b = rebind(*b, d, &slot);
  }
  if (!b) return XAL_SUCCESS;
  switch (r) {
    case QuotaLedger::Reserve::kOk:
    case QuotaLedger::Reserve::kStale:
      return XAL_SUCCESS;
    case QuotaLedger::Reserve::kOverLimit:
      return fail(d, XAL_ERROR_OUT_OF_MEMORY,
                  cat("allocation of ", bytes, " bytes on device ", d->index,
                      " would pass the job-wide memory limit of ",
                      format_bytes(u.limit), " (shared quota ledger '", b->name,
                      "': ", format_bytes(u.used), " in use by ", u.processes,
                      u.processes == 1 ? " process, " : " processes, ",
                      format_bytes(u.own), " of it by this one)"));
    case QuotaLedger::Reserve::kNoEntry:
      break;
  }
  return fail(d, XAL_ERROR_OUT_OF_MEMORY,
              cat("shared quota ledger '", b->name, "' has no free entry for device ",
                  d->index, ": ", u.processes, " live processes use it already"));
}

void shared_quota_release(DeviceObj* d, uint64_t bytes) noexcept {
  int slot = -1;
  if (Binding* b = bound_if_known(d, &slot)) b->ledger->release(slot, bytes);
}

void shared_quota_reset(DeviceObj* d) noexcept {
  int slot = -1;
  if (Binding* b = bound_if_known(d, &slot)) b->ledger->reset(slot);
}

void shared_quota_drop(DeviceObj* d) noexcept {
  int slot = -1;
  if (Binding* b = bound_if_known(d, &slot)) b->ledger->drop(slot);
}

xal_status_t shared_quota_set_limit(DeviceObj* d, uint64_t bytes,
                                    const std::function<bool()>& commit) {
  int slot = -1;
  Binding* b = bound(d, &slot);
  LedgerUsage u;
  auto r = QuotaLedger::SetLimit::kStale;
  for (int tries = 0; b && r == QuotaLedger::SetLimit::kStale; ++tries) {
    if (tries == kTries) return stale_failure(*b, d);
    r = b->ledger->update_limit(slot, bytes, true, &u, commit);
    if (r == QuotaLedger::SetLimit::kStale) b = rebind(*b, d, &slot);
  }
  if (!b) {
    commit();
    return XAL_SUCCESS;
  }
  switch (r) {
    case QuotaLedger::SetLimit::kOk:
    case QuotaLedger::SetLimit::kRefused:
      return XAL_SUCCESS;
    case QuotaLedger::SetLimit::kStale:
      commit();  // not reached: the loop ends on stale_failure
      return XAL_SUCCESS;
    case QuotaLedger::SetLimit::kBelowUse:
      return fail(d, XAL_ERROR_OUT_OF_MEMORY,
                  cat("cannot set a memory limit of ", bytes, " bytes on device ",
                      d->index, ": the job already uses ", u.used,
                      " bytes of it (shared quota ledger '", b->name, "')"));
    case QuotaLedger::SetLimit::kNoEntry:
      break;
  }
  return fail(d, XAL_ERROR_OUT_OF_MEMORY,
              cat("shared quota ledger '", b->name,
                  "' has no free entry for device ", d->index));
}

bool shared_quota_usage(DeviceObj* d, LedgerUsage* out) {
  int slot = -1;
  Binding* b = bound(d, &slot);
  bool stale = true;
  for (int tries = 0; b && stale && tries < kTries; ++tries) {
    *out = b->ledger->usage(slot, &stale);
    if (stale) b = rebind(*b, d, &slot);
  }
  return b != nullptr;  // still stale: the figures of an empty slot
}

void shared_compute_attach(DeviceObj* d) {
  ComputeShare* share = d->state->share;
  if (!share) return;
  if (!d->state->partition) {  // a whole card's meter: no job bucket to draw from
    share->set_bucket(nullptr);
    return;
  }
  SharedBucket* bucket = nullptr;
  int slot = -1;
  Binding* b = bound(d, &slot);
  for (int tries = 0; b && !bucket && tries < kTries; ++tries) {
    bucket = b->ledger->attach(slot, share->percent());
    if (!bucket) b = rebind(*b, d, &slot);
  }
  if (b && !bucket)
    log_message(XAL_LOG_WARNING,
                cat("XAL_QUOTA_LEDGER: no entry for device ", d->index, " in ledger '",
                    b->name, "'; its compute share stays per process").c_str());
  share->set_bucket(bucket);
}

bool shared_quota_processes(DeviceObj* d, std::vector<LedgerProcess>* out) {
  int slot = -1;
  Binding* b = bound(d, &slot);
  bool stale = true;
  for (int tries = 0; b && stale && tries < kTries; ++tries) {
    *out = b->ledger->processes(slot, &stale);
    if (stale) b = rebind(*b, d, &slot);
  }
  return b != nullptr;
}

}  // namespace xal::core
