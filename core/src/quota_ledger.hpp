// The cross-process quota ledger: a small POSIX shared-memory table that the
// processes of one job (XAL_QUOTA_LEDGER=NAME) keep of the device memory each
// of them holds, so that a memory limit counts every process on a card.
//
// The object /xal-ledger-<uid>-<NAME> holds a fixed-size versioned header, a
// process-shared robust mutex and a table of device slots keyed by the
// device uuid. Each slot has per-process entries {pid, start time, bytes,
// limit}; the start time (field 22 of /proc/PID/stat) tells a reused pid
// from the process that wrote the entry. Entries of dead processes are
// reclaimed when found. This file depends on nothing else of the core.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace xal::core {

using DeviceUuid = std::array<uint8_t, 16>;

namespace ledger_layout {

inline constexpr uint64_t kMagic = 0x314745444c4c4158ull;  // "XALLEDG1"
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kMaxDevices = 64;     // uuids per ledger
inline constexpr uint32_t kMaxProcesses = 128;  // processes per uuid

struct ProcessEntry {
  int32_t pid;          // 0: free entry
  uint32_t reserved0;
  uint64_t start_time;  // clock ticks after boot (/proc/PID/stat field 22)
  uint64_t bytes;       // device memory this process holds through xal
  uint64_t limit;       // the limit this process set, 0: none
};

struct DeviceSlot {
  uint8_t uuid[16];
  uint32_t in_use;       // 1 once the uuid is set
  uint32_t high_water;   // entries [0, high_water) may be used
  uint64_t limit;        // the limit in force at the last update, 0: none
  uint64_t used;         // job-wide bytes at the last update
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
};

// One process's view of a ledger. Every member takes the ledger's lock;
// thread-safe. Not copyable.
class QuotaLedger {
 public:
  enum class Reserve { kOk, kOverLimit, kNoEntry };

  // True when `name` is 1 to 64 characters of [A-Za-z0-9._-]; else *why says
  // what is wrong.
  static bool valid_name(std::string_view name, std::string* why);
  // "/xal-ledger-<uid>-<name>".
  static std::string object_name(std::string_view name);
  // Opens the ledger `name`, creating it if needed. nullptr with *error set
  // on a bad name, a ledger of another version or size, or a system error.
  static std::unique_ptr<QuotaLedger> open(std::string_view name,
                                           std::string* error);
  // Removes the shared-memory object (open mappings stay valid).
  static bool unlink(std::string_view name);

  // Removes this process's entries, then unmaps.
  ~QuotaLedger();
  QuotaLedger(const QuotaLedger&) = delete;
  QuotaLedger& operator=(const QuotaLedger&) = delete;

  // The slot of `uuid` (created if absent), or -1 with *error when the
  // table has no free slot.
  int slot(const DeviceUuid& uuid, std::string* error);

  // Adds `bytes` to this process's entry in `slot` when the job-wide use plus
  // `bytes` stays within the limit in force (own_limit counts as this
  // process's limit, 0: none). *usage receives the figures before the
  // reservation. kNoEntry: every entry of the slot is held by a live process.
  Reserve reserve(int slot, uint64_t bytes, uint64_t own_limit,
                  LedgerUsage* usage);
  // Takes `bytes` back (never below 0).
  void release(int slot, uint64_t bytes) noexcept;
  // This process's bytes in `slot` back to 0 (device reset, shutdown).
  void reset(int slot) noexcept;
  // Records this process's limit (0: none). false when no entry was free.
  bool set_limit(int slot, uint64_t limit);
  // Job-wide figures after reclaiming dead processes' entries.
  LedgerUsage usage(int slot);
  // The live processes' entries of `slot`, after the same reclaiming.
  std::vector<LedgerProcess> processes(int slot);
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
  // Under the lock: this process's entry in `slot`, created when `create`.
  ledger_layout::ProcessEntry* own_entry(int slot, bool create);
  LedgerUsage sum(int slot);
  bool reclaim_slot(int slot);
  void refresh_identity();

  ledger_layout::File* file_ = nullptr;
  std::string object_;
  pid_t pid_ = 0;
  uint64_t start_time_ = 0;
};

// Start time of `pid` (field 22 of /proc/PID/stat) and whether it is a
// zombie; false when the process does not exist.
bool process_start_time(pid_t pid, uint64_t* start_time, bool* zombie);

}  // namespace xal::core
