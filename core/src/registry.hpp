// The allocation registry of one device: every live xal_mem_alloc range,
// so that copies, memsets and frees can be checked. Thread-safe (a sorted
// map under a shared_mutex).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <vector>

namespace xal::core {

class Registry {
 public:
  struct Range {
    uint64_t base = 0;
    uint64_t size = 0;
  };

  void add(uint64_t base, uint64_t size);
  // Removes the allocation starting at `base`; its size, or nullopt.
  std::optional<uint64_t> remove(uint64_t base);
  // True when [ptr, ptr+bytes) lies inside one live allocation. A per-thread
  // cache of the last ranges found answers repeated checks without the lock
  // until any allocation of the registry is freed. Otherwise
  // `nearest` (if given) is the allocation containing ptr or the closest
  // one below it (size 0 when none).
  bool contains(uint64_t ptr, uint64_t bytes, Range* nearest) const;
  // The live allocation holding all of [ptr, ptr+bytes), if any (bytes >= 1).
  std::optional<Range> containing(uint64_t ptr, uint64_t bytes) const;
  // The allocation that starts at `base`, if any.
  std::optional<uint64_t> find(uint64_t base) const;
  std::vector<Range> snapshot() const;
  void clear();
  size_t count() const;

 private:
  bool contains_locked(uint64_t ptr, uint64_t bytes, Range* nearest) const;

  mutable std::shared_mutex mu_;
  std::map<uint64_t, uint64_t> ranges_;  // base -> size
  // Renewed by every remove/clear: cached ranges of older versions are
  // stale. Versions come from one process-wide counter, so that a registry
  // created later at the same address never repeats a version.
  std::atomic<uint64_t> version_{next_version()};
  static uint64_t next_version();
};

}  // namespace xal::core
