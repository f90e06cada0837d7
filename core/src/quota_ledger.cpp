// The cross-process quota ledger: the table and its lock (see
// quota_ledger.hpp; opening is in quota_ledger_open.cpp).
#include "quota_ledger.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace xal::core {

using namespace ledger_layout;

namespace {

void lock(File* f) {
  const int r = pthread_mutex_lock(&f->header.mutex);
  if (r == EOWNERDEAD) {
    // The holder died inside the lock: each update it could have left half
    // done is one counter of its own entry, which is reclaimed as dead.
    pthread_mutex_consistent(&f->header.mutex);
    ++f->header.recoveries;
    return;
  }
  if (r != 0)
    throw std::runtime_error("cannot lock the shared quota ledger: " +
                             std::string(std::strerror(r)));
}

// Whether the process that wrote an entry {pid, start} still runs.
bool alive(pid_t pid, uint64_t start) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  uint64_t now = 0;
  bool zombie = false;
  if (!process_start_time(pid, &now, &zombie)) return start == 0;
  return !zombie && (start == 0 || now == start);
}

// This process's pid without a system call per use: read once, and again
// in the child after a fork.
std::atomic<pid_t> g_pid{0};

pid_t current_pid() noexcept {
  static const bool registered = [] {
    pthread_atfork(nullptr, nullptr, [] { g_pid.store(::getpid()); });
    g_pid.store(::getpid());
    return true;
  }();
  (void)registered;
  return g_pid.load(std::memory_order_relaxed);
}

// Entries [0, n) of a slot may be in use (bounded even in a damaged table).
uint32_t used_entries(const DeviceSlot& d) noexcept {
  return std::min(d.high_water, kMaxProcesses);
}

// A slot handle: the slot's generation above kIndexBits bits of index.
constexpr int kIndexBits = 8;
constexpr uint32_t kMaxGeneration = (1u << (31 - kIndexBits)) - 1;
static_assert(kMaxDevices <= (1u << kIndexBits));

int make_handle(uint32_t index, uint32_t generation) noexcept {
  return static_cast<int>((generation << kIndexBits) | index);
}

// The slot's label: `label` cut to fit, NUL-terminated.
void copy_label(DeviceSlot& d, std::string_view label) noexcept {
  const size_t n = std::min(label.size(), sizeof d.label - 1);
  if (n != 0) std::memcpy(d.label, label.data(), n);
  std::memset(d.label + n, 0, sizeof d.label - n);
}

// An entry with nothing left to record: no memory, no limit, not drawing
// from the slot's share.
bool idle(const ProcessEntry& e) noexcept {
  return e.bytes == 0 && e.limit == 0 && !(e.flags & kEntryActive);
}

}  // namespace

bool process_start_time(pid_t pid, uint64_t* start_time, bool* zombie) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return false;
  const auto close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  // Field 3 is the state; field 22 the start time.
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return false;
    if (i == 3) *zombie = field == "Z" || field == "X";
  }
  try {
    *start_time = std::stoull(field);
  } catch (...) {
    return false;
  }
  return true;
}

QuotaLedger::QuotaLedger(File* file, std::string object)
    : file_(file), object_(std::move(object)) {
  refresh_identity();
}

QuotaLedger::~QuotaLedger() {
  if (reader_) {
    ::munmap(file_, sizeof(File));
    return;
  }
  try {
    Guard g(*this);
    refresh_identity();
    for (uint32_t s = 0; s < kMaxDevices; ++s)
      if (ProcessEntry* e = own_entry(static_cast<int>(s), false)) *e = {};
  } catch (...) {
  }
  ::munmap(file_, sizeof(File));
}

QuotaLedger::Guard::Guard(QuotaLedger& ledger) : ledger_(ledger) {
  lock(ledger_.file_);
}

QuotaLedger::Guard::~Guard() { pthread_mutex_unlock(&ledger_.file_->header.mutex); }

void QuotaLedger::refresh_identity() {
  const pid_t now = current_pid();
  if (now == pid_) return;
  pid_ = now;
  bool zombie = false;
  if (!process_start_time(now, &start_time_, &zombie)) start_time_ = 0;
}

uint32_t QuotaLedger::slot_index(int handle) noexcept {
  return static_cast<uint32_t>(handle) & ((1u << kIndexBits) - 1);
}

int QuotaLedger::index_of(int handle) const noexcept {
  if (handle < 0) return -1;
  const uint32_t index = slot_index(handle);
  const uint32_t generation = static_cast<uint32_t>(handle) >> kIndexBits;
  if (index >= kMaxDevices || generation == 0 ||
      file_->slots[index].in_use != generation)
    return -1;
  return static_cast<int>(index);
}

int QuotaLedger::slot(const DeviceUuid& uuid, std::string* error,
                      std::string_view label) {
  Guard g(*this);
  refresh_identity();
  const uint64_t now = ++file_->header.lookups;
  int free_slot = -1;
  for (uint32_t s = 0; s < kMaxDevices; ++s) {
    DeviceSlot& d = file_->slots[s];
    if (d.in_use && std::memcmp(d.uuid, uuid.data(), 16) == 0) {
      d.looked_up = now;
      if (d.label[0] == 0) copy_label(d, label);
      return make_handle(s, d.in_use);
    }
    if (!d.in_use && free_slot < 0) free_slot = static_cast<int>(s);
  }
  // The table is full: the slot without a live entry looked up longest ago
  // (not one another process has just looked up and not used yet).
  if (free_slot < 0) {
    for (uint32_t s = 0; s < kMaxDevices; ++s) {
      reclaim_slot(static_cast<int>(s));
      const DeviceSlot& d = file_->slots[s];
      if (d.high_water == 0 &&
          (free_slot < 0 || d.looked_up < file_->slots[free_slot].looked_up))
        free_slot = static_cast<int>(s);
    }
  }
  if (free_slot < 0) {
    *error = object_ + " already tracks " + std::to_string(kMaxDevices) +
             " devices with live processes, its maximum";
    return -1;
  }
  DeviceSlot& d = file_->slots[free_slot];
  const uint32_t generation =
      d.in_use == 0 || d.in_use >= kMaxGeneration ? 1 : d.in_use + 1;
  // The new generation first: should this process die halfway (the next
  // holder of the lock goes on), the old handles are stale already, and the
  // generation count never goes back to one for a slot that was used.
  std::atomic_ref<uint32_t>(d.in_use).store(generation);
  std::memcpy(d.uuid, uuid.data(), 16);
  d.high_water = 0;
  d.limit = 0;
  d.used = 0;
  d.looked_up = now;
  std::memset(static_cast<void*>(d.processes), 0, sizeof d.processes);
  d.window = {};
  d.bucket.paid_until_ns.store(0);
  d.bucket.busy_ns.store(0);
  d.bucket.percent.store(0);
  copy_label(d, label);
  return make_handle(static_cast<uint32_t>(free_slot), generation);
}

ProcessEntry* QuotaLedger::own_entry(int slot, bool create, bool* created) {
  DeviceSlot& d = file_->slots[slot];
  if (created) *created = false;
  for (uint32_t i = 0; i < used_entries(d); ++i) {
    ProcessEntry& e = d.processes[i];
    if (e.pid == pid_ && e.start_time == start_time_) return &e;
  }
  if (!create) return nullptr;
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (uint32_t i = 0; i < kMaxProcesses; ++i) {
      ProcessEntry& e = d.processes[i];
      if (e.pid != 0) continue;
      e = ProcessEntry{pid_, 0, start_time_, 0, 0, {}, {}};
      if (i >= d.high_water) d.high_water = i + 1;
      if (created) *created = true;
      return &e;
    }
    if (!reclaim_slot(slot)) break;
  }
  return nullptr;
}

LedgerUsage QuotaLedger::sum(int slot) {
  DeviceSlot& d = file_->slots[slot];
  LedgerUsage u;
  for (uint32_t i = 0; i < used_entries(d); ++i) {
    const ProcessEntry& e = d.processes[i];
    if (e.pid == 0) continue;
    u.used += e.bytes;
    ++u.processes;
    if (e.pid == pid_ && e.start_time == start_time_) u.own += e.bytes;
    if (e.limit != 0 && (u.limit == 0 || e.limit < u.limit)) u.limit = e.limit;
  }
  d.used = u.used;
  d.limit = u.limit;
  return u;
}

bool QuotaLedger::reclaim_slot(int slot) {
  DeviceSlot& d = file_->slots[slot];
  bool any = false;
  for (uint32_t i = 0; i < used_entries(d); ++i) {
    ProcessEntry& e = d.processes[i];
    if (e.pid == 0 || (e.pid == pid_ && e.start_time == start_time_)) continue;
    if (!alive(e.pid, e.start_time)) {
      e = {};
      any = true;
    }
  }
  d.high_water = used_entries(d);
  while (d.high_water > 0 && d.processes[d.high_water - 1].pid == 0) --d.high_water;
  return any;
}

QuotaLedger::Reserve QuotaLedger::reserve(int handle, uint64_t bytes,
                                          uint64_t own_limit, LedgerUsage* usage) {
  const std::atomic<uint64_t> limit{own_limit};
  return reserve(handle, bytes, limit, usage);
}

QuotaLedger::Reserve QuotaLedger::reserve(int handle, uint64_t bytes,
                                          const std::atomic<uint64_t>& own_limit,
                                          LedgerUsage* usage) {
  Guard g(*this);
  refresh_identity();
  const int slot = index_of(handle);
  if (slot < 0) return Reserve::kStale;
  bool created = false;
  ProcessEntry* e = own_entry(slot, true, &created);
  if (!e) {
    if (usage) *usage = sum(slot);
    return Reserve::kNoEntry;
  }
  // The limit of an existing entry is update_limit's alone. own_limit is
  // read under the lock, where update_limit changes it too.
  if (created) e->limit = own_limit.load();
  LedgerUsage u = sum(slot);
  auto over = [&] {
    return u.limit != 0 && (u.used + bytes < u.used || u.used + bytes > u.limit);
  };
  if (over() && reclaim_slot(slot)) u = sum(slot);
  if (over()) {
    // An entry made for this reservation alone would list this process
    // among the job's and hold one of the slot's entries for nothing.
    // The limit that refused it is still the one reported.
    if (created && e->bytes == 0) {
      *e = {};
      u.processes = sum(slot).processes;
    }
    if (usage) *usage = u;
    return Reserve::kOverLimit;
  }
  if (usage) *usage = u;
  e->bytes += bytes;
  file_->slots[slot].used += bytes;
  return Reserve::kOk;
}

void QuotaLedger::release(int handle, uint64_t bytes) noexcept {
  try {
    Guard g(*this);
    refresh_identity();
    const int slot = index_of(handle);
    if (slot < 0) return;  // reused: this process had no entry in it
    ProcessEntry* e = own_entry(slot, false);
    if (!e) return;
    e->bytes -= std::min(bytes, e->bytes);
    if (idle(*e)) *e = {};
    sum(slot);
  } catch (...) {
  }
}

void QuotaLedger::reset(int slot) noexcept { release(slot, UINT64_MAX); }

void QuotaLedger::drop(int handle) noexcept {
  try {
    Guard g(*this);
    refresh_identity();
    const int slot = index_of(handle);
    if (slot < 0) return;
    if (ProcessEntry* e = own_entry(slot, false)) *e = {};
    sum(slot);
  } catch (...) {
  }
}

QuotaLedger::SetLimit QuotaLedger::store_limit(int slot, uint64_t limit,
                                               const std::function<bool()>& commit) {
  ProcessEntry* e = own_entry(slot, limit != 0);
  if (!e && limit != 0) return SetLimit::kNoEntry;
  const bool refused = commit && !commit();
  if (e && !refused) e->limit = limit;
  if (e && idle(*e)) *e = {};
  sum(slot);
  return refused ? SetLimit::kRefused : SetLimit::kOk;
}

bool QuotaLedger::set_limit(int slot, uint64_t limit) {
  return update_limit(slot, limit, false, nullptr) == SetLimit::kOk;
}

QuotaLedger::SetLimit QuotaLedger::update_limit(int handle, uint64_t limit,
                                                bool within_use,
                                                LedgerUsage* usage,
                                                const std::function<bool()>& commit) {
  Guard g(*this);
  refresh_identity();
  const int slot = index_of(handle);
  if (slot < 0) return SetLimit::kStale;
  reclaim_slot(slot);
  const LedgerUsage u = sum(slot);
  if (usage) *usage = u;
  if (within_use && limit != 0 && u.used > limit) return SetLimit::kBelowUse;
  return store_limit(slot, limit, commit);
}

QuotaLedger::SetLimit QuotaLedger::publish_limit(int handle,
                                                 const std::atomic<uint64_t>& limit) {
  Guard g(*this);
  refresh_identity();
  const int slot = index_of(handle);
  if (slot < 0) return SetLimit::kStale;
  const uint64_t value = limit.load();
  if (value == 0) return SetLimit::kOk;
  return store_limit(slot, value, {});
}

LedgerUsage QuotaLedger::usage(int handle, bool* stale) {
  Guard g(*this);
  refresh_identity();
  const int slot = index_of(handle);
  if (stale) *stale = slot < 0;
  if (slot < 0) return {};
  reclaim_slot(slot);
  return sum(slot);
}

std::vector<LedgerProcess> QuotaLedger::processes(int handle, bool* stale) {
  Guard g(*this);
  refresh_identity();
  const int slot = index_of(handle);
  if (stale) *stale = slot < 0;
  if (slot < 0) return {};
  reclaim_slot(slot);
  const uint64_t now = monotonic_ns();
  std::vector<LedgerProcess> out;
  const DeviceSlot& d = file_->slots[slot];
  for (uint32_t i = 0; i < used_entries(d); ++i) {
    const ProcessEntry& e = d.processes[i];
    if (e.pid == 0) continue;
    const bool self = e.pid == pid_ && e.start_time == start_time_;
    out.push_back({e.pid, self, e.bytes, e.limit, e.usage,
                   window_percent(e.window, now)});
  }
  return out;
}

uint32_t QuotaLedger::reclaim() {
  Guard g(*this);
  refresh_identity();
  uint32_t n = 0;
  for (uint32_t s = 0; s < kMaxDevices; ++s) {
    const auto& d = file_->slots[s];
    uint32_t before = 0, after = 0;
    for (uint32_t i = 0; i < used_entries(d); ++i) before += d.processes[i].pid != 0;
    reclaim_slot(static_cast<int>(s));
    for (uint32_t i = 0; i < used_entries(d); ++i) after += d.processes[i].pid != 0;
    n += before - after;
  }
  return n;
}

uint64_t QuotaLedger::recoveries() {
  Guard g(*this);
  return file_->header.recoveries;
}

}  // namespace xal::core
