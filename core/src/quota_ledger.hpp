// The cross-process quota ledger: a small POSIX shared-memory table that the
// processes of one job (XAL_QUOTA_LEDGER=NAME) keep of the device memory each
// of them holds, so that a memory limit counts every process on a card, of
// the compute share they draw from together, and of what each of them uses.
//
// The object /xal-ledger-<uid>-<NAME> holds a fixed-size versioned header, a
// process-shared robust mutex and a table of device slots keyed by the
// device uuid. Each slot has per-process entries {pid, start time, bytes,
// limit, usage}; the start time (field 22 of /proc/PID/stat) tells a reused
// pid from the process that wrote the entry. Entries of dead processes are
// reclaimed when found; when the table is full, the slot without a live
// entry looked up longest ago is given to another uuid, under a new
// generation, so that a slot handle a process kept reads as stale. Each slot
// also holds the token bucket of the device's compute share (a partition's),
// which every process of the job on it draws from without the lock
// (shared_bucket.hpp). This file depends on nothing else of the core.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shared_bucket.hpp"

namespace xal::core {

using DeviceUuid = std::array<uint8_t, 16>;

namespace ledger_layout {

inline constexpr uint64_t kMagic = 0x314745444c4c4158ull;  // "XALLEDG1"
// 2: slots are reused; 3: compute-share buckets, usage and labels.
inline constexpr uint32_t kVersion = 3;
inline constexpr uint32_t kMaxDevices = 64;     // uuids per ledger
inline constexpr uint32_t kMaxProcesses = 128;  // processes per uuid

inline constexpr uint32_t kLabelBytes = 64;
// ProcessEntry::flags: the process draws from the slot's compute share (its
// entry stays while it runs, with or without memory).
inline constexpr uint32_t kEntryActive = 1u;

// What a process did on a device through xal (cumulative; its owner
// publishes it, about every 100 ms).
struct ProcessUsage {
  uint64_t busy_ns;           // device time of its work (partitions)
  uint64_t bytes_copied;      // host to device, device to host, device, peer
  uint64_t collective_calls;
  uint64_t collective_bytes;
  uint64_t allocations;       // live allocations
  uint64_t errors;            // failed calls on the device
};

// Utilization over the last window of about a second: busy time at the
// window's start, and the ratio of the window before (parts per million).
struct UsageWindow {
  uint64_t start_ns;       // CLOCK_MONOTONIC; 0: not started
  uint64_t start_busy_ns;
  uint64_t ratio_ppm;
};

struct ProcessEntry {
  int32_t pid;          // 0: free entry
  uint32_t flags;       // kEntryActive
  uint64_t start_time;  // clock ticks after boot (/proc/PID/stat field 22)
  uint64_t bytes;       // device memory this process holds through xal
  uint64_t limit;       // the limit this process set, 0: none
  ProcessUsage usage;
  UsageWindow window;
};

struct DeviceSlot {
  uint8_t uuid[16];
  uint32_t in_use;       // 0: free; else the generation of its uuid (>= 1)
  uint32_t high_water;   // entries [0, high_water) may be used
  uint64_t limit;        // the limit in force at the last update, 0: none
  uint64_t used;         // job-wide bytes at the last update
  uint64_t looked_up;    // Header::lookups at its last lookup
  char label[kLabelBytes];  // the device's name, as its first user gave it
  SharedBucket bucket;   // the compute share, drawn from without the lock
  UsageWindow window;    // of bucket.busy_ns: the job's utilization
  ProcessEntry processes[kMaxProcesses];
};

struct Header {
  uint64_t magic;
  uint32_t version;
  uint32_t struct_size;             // sizeof(File)
  std::atomic<uint32_t> initialised;// 1 once the creator has set it up
  uint32_t device_count;            // kMaxDevices
  uint32_t process_count;           // kMaxProcesses
  uint32_t reserved0;
  uint64_t recoveries;              // locks taken over from a dead holder
  uint64_t lookups;                 // slot lookups so far (a clock)
  pthread_mutex_t mutex;            // process-shared, robust
};

struct File {
  Header header;
  DeviceSlot slots[kMaxDevices];
};

}  // namespace ledger_layout

// Job-wide figures of one device slot.
struct LedgerUsage {
  uint64_t used = 0;       // bytes held by every live process
  uint64_t own = 0;        // of which this process
  uint64_t limit = 0;      // the smallest limit a live process set, 0: none
  uint32_t processes = 0;  // live processes with an entry
};

// One live process's entry in a device slot.
struct LedgerProcess {
  int32_t pid = 0;
  bool self = false;
  uint64_t bytes = 0;
  uint64_t limit = 0;
  ledger_layout::ProcessUsage usage{};
  double utilization = 0;  // percent of its last window
};

// A utilization window's ratio in percent at `now_ns`; 0 when nobody moved
// it on lately.
double window_percent(const ledger_layout::UsageWindow& w, uint64_t now_ns) noexcept;
// CLOCK_MONOTONIC (std::chrono::steady_clock) in nanoseconds.
uint64_t monotonic_ns() noexcept;

// One row of a ledger as tools read it: a device's job-wide figures (pid 0:
// memory and usage of its live processes, busy time and utilization of all
// that drew from its compute share) or one live process's.
struct LedgerRow {
  DeviceUuid uuid{};
  std::string label;
  int32_t pid = 0;
  uint32_t percent = 0;    // the compute share its users gave, 0: none
  uint32_t processes = 0;  // job rows: live processes with an entry
  uint64_t bytes = 0;
  uint64_t limit = 0;
  ledger_layout::ProcessUsage usage{};
  double utilization = 0;  // percent of the last window, 0 when none is recent
};

// One process's view of a ledger. Every member takes the ledger's lock;
// thread-safe. Not copyable.
class QuotaLedger {
 public:
  // kStale: the slot handle is out of date (its slot now holds another
  // uuid); look the device up again with slot().
  enum class Reserve { kOk, kOverLimit, kNoEntry, kStale };
  // kRefused: update_limit's `commit` said no.
  enum class SetLimit { kOk, kBelowUse, kNoEntry, kStale, kRefused };

  // True when `name` is 1 to 64 characters of [A-Za-z0-9._-]; else *why says
  // what is wrong.
  static bool valid_name(std::string_view name, std::string* why);
  // "/xal-ledger-<uid>-<name>".
  static std::string object_name(std::string_view name);
  // Opens the ledger `name`, creating it if needed. nullptr with *error set
  // on a bad name, a ledger of another version or size, or a system error.
  static std::unique_ptr<QuotaLedger> open(std::string_view name,
                                           std::string* error);
  // Opens an existing ledger to read it (tools); the same checks. Closing
  // it leaves the entries of the calling process as they are.
  // *other_layout, when given, tells a ledger of another layout.
  static std::unique_ptr<QuotaLedger> open_existing(std::string_view name,
                                                    std::string* error,
                                                    bool* other_layout = nullptr);
  // Removes the shared-memory object (open mappings stay valid).
  static bool unlink(std::string_view name);

  // Removes this process's entries, then unmaps.
  ~QuotaLedger();
  QuotaLedger(const QuotaLedger&) = delete;
  QuotaLedger& operator=(const QuotaLedger&) = delete;

  // A handle to the slot of `uuid` (created if absent; when the table is
  // full, the slot without a live entry looked up longest ago is reused),
  // or -1 with *error when every slot has a live entry. A handle stays
  // valid while its slot holds `uuid`; the members below treat a stale one
  // as a slot with nothing in it (reserve and update_limit say kStale,
  // usage and processes set *stale). A slot where this process has an
  // entry is never reused, so its handles stay valid.
  // `label` (the device's name) is recorded when the slot has none.
  int slot(const DeviceUuid& uuid, std::string* error,
           std::string_view label = {});
  // The index in File::slots of a handle (for tests and tools).
  static uint32_t slot_index(int handle) noexcept;

  // Adds `bytes` to this process's entry in `slot` when the job-wide use plus
  // `bytes` stays within the limit in force. own_limit is this process's
  // limit (0: none), read under the lock and recorded only when the entry is
  // created here; an existing entry keeps the limit update_limit gave it.
  // *usage receives the figures before the reservation. kNoEntry: every
  // entry of the slot is held by a live process. An entry created by a
  // reservation that fails is removed again.
  Reserve reserve(int slot, uint64_t bytes, const std::atomic<uint64_t>& own_limit,
                  LedgerUsage* usage);
  // The same with a fixed own_limit (tests and tools).
  Reserve reserve(int slot, uint64_t bytes, uint64_t own_limit,
                  LedgerUsage* usage);
  // Takes `bytes` back (never below 0).
  void release(int slot, uint64_t bytes) noexcept;
  // This process's bytes in `slot` back to 0 (device reset, shutdown).
  void reset(int slot) noexcept;
  // Removes this process's entry of `slot`, bytes and limit (the device is
  // gone: an undone partition).
  void drop(int slot) noexcept;
  // Records this process's limit (0: none). With `within_use`, under the
  // same lock, refuses a limit (other than 0) below the job-wide use
  // (kBelowUse). `commit`, when given, runs under the lock once the limit
  // can be recorded, to change the process's own limit (the one reserve
  // reads) at the same moment; when it returns false nothing is recorded
  // (kRefused). *usage, when given, receives the figures before the change.
  SetLimit update_limit(int slot, uint64_t limit, bool within_use,
                        LedgerUsage* usage,
                        const std::function<bool()>& commit = {});
  // Records `limit`, read under the lock, when it is not 0 (a device looked
  // up again publishes its process's limit).
  SetLimit publish_limit(int slot, const std::atomic<uint64_t>& limit);
  // update_limit without the check: false when no entry was free.
  bool set_limit(int slot, uint64_t limit);
  // Marks this process's entry of `slot` active (created if needed; it then
  // stays until the process ends or drops the slot, so the slot is not
  // reused) and returns the slot's compute-share bucket, which stays mapped
  // while this ledger is open; nullptr for a stale handle or no free entry.
  SharedBucket* attach(int slot, uint32_t percent);
  // Records this process's usage of `slot` at `now_ns` (CLOCK_MONOTONIC)
  // in its entry, if it has one, moves the utilization windows on and
  // reclaims dead processes' entries of the slot.
  void publish(int slot, const ledger_layout::ProcessUsage& usage, uint64_t now_ns);
  // Every used slot with a live entry: its job row, then its processes'
  // rows, after reclaiming dead processes' entries.
  std::vector<LedgerRow> rows(uint64_t now_ns);
  // Job-wide figures after reclaiming dead processes' entries.
  LedgerUsage usage(int slot, bool* stale = nullptr);
  // The live processes' entries of `slot`, after the same reclaiming.
  std::vector<LedgerProcess> processes(int slot, bool* stale = nullptr);
  // Reclaims every entry of a dead process; returns how many.
  uint32_t reclaim();
  // Locks taken over from a holder that died (EOWNERDEAD).
  uint64_t recoveries();

  // Holds the ledger's lock for its lifetime.
  class Guard {
   public:
    explicit Guard(QuotaLedger& ledger);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    QuotaLedger& ledger_;
  };

  // The mapped table (read it under a Guard). For tests and tools.
  ledger_layout::File* file() noexcept { return file_; }

 private:
  QuotaLedger(ledger_layout::File* file, std::string object);
  static std::unique_ptr<QuotaLedger> open_mode(std::string_view name, bool create,
                                                std::string* error,
                                                bool* other_layout);
  // Under the lock: this process's entry in `slot`, created when `create`
  // (*created, when given, tells whether it was).
  ledger_layout::ProcessEntry* own_entry(int slot, bool create,
                                         bool* created = nullptr);
  // Under the lock: the index of a current handle, -1 for a stale one.
  int index_of(int handle) const noexcept;
  // Under the lock: update_limit's change (slot is an index).
  SetLimit store_limit(int slot, uint64_t limit,
                       const std::function<bool()>& commit);
  // Under the lock; the helpers below take slot indices, not handles.
  LedgerUsage sum(int slot);
  bool reclaim_slot(int slot);
  void refresh_identity();

  ledger_layout::File* file_ = nullptr;
  std::string object_;
  bool reader_ = false;  // opened by open_existing
  pid_t pid_ = 0;
  uint64_t start_time_ = 0;
};

// Start time of `pid` (field 22 of /proc/PID/stat) and whether it is a
// zombie; false when the process does not exist.
bool process_start_time(pid_t pid, uint64_t* start_time, bool* zombie);

}  // namespace xal::core
