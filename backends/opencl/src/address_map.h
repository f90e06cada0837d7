// Device addresses for OpenCL buffers. OpenCL has no device pointers, so
// each device owns a synthetic address range; every allocation is a cl_mem
// placed at a 256-byte aligned address in it. Resolving any address inside
// an allocation gives (cl_mem, offset), so copies and kernel arguments work
// at any offset.
#pragma once

#include "cl_headers.h"
#include "xal/xal.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <vector>

namespace xal::opencl {

inline constexpr uint64_t kAllocationAlignment = 256;
// Each device gets 2^44 bytes (16 TiB) of addresses: device i (of one
// backend instance) starts at (i + 1) << 44, so an address names its device.
inline constexpr unsigned kAddressSpaceShift = 44;

struct Resolved {
  cl_mem mem = nullptr;
  uint64_t offset = 0;       // of the address inside the allocation
  uint64_t base = 0;         // the allocation's address
  uint64_t alloc_size = 0;   // bytes requested at allocation
};

// One device's allocations. Thread-safe.
class AddressSpace {
 public:
  AddressSpace(uint64_t base, uint64_t size);

  // Places `mem` of `bytes` (> 0) at a free aligned address; nullopt when
  // the allocated total would pass `limit` (sets *over_limit) or the
  // address range is exhausted. The space then owns the reference.
  std::optional<xal_devptr_t> insert(cl_mem mem, uint64_t bytes, uint64_t limit,
                                     bool* over_limit);

  // Places an imported buffer (memory xal does not own: xal_mem_import) of
  // `bytes` the same way, outside the allocated total and its limit;
  // nullopt when the address range is exhausted. The space then owns the
  // reference (a retain of the caller's buffer).
  std::optional<xal_devptr_t> insert_imported(cl_mem mem, uint64_t bytes);

  // Removes the allocation that starts at `ptr`; returns its cl_mem (the
  // caller releases it) or nullptr when no allocation starts there.
  cl_mem erase(xal_devptr_t ptr);

  // Releases the allocation that starts at `ptr` with `release_mem(cl_mem)`,
  // which returns a CL code, and removes it only when that succeeds (else
  // it stays live, so that the free can be retried). Under the lock, so
  // that two calls never release one buffer twice. nullopt when no
  // allocation starts at `ptr`.
  template <typename F>
  std::optional<cl_int> release(xal_devptr_t ptr, F&& release_mem) {
    std::unique_lock lock(mutex_);
    auto it = live_.find(ptr);
    if (it == live_.end()) return std::nullopt;
    const cl_int rc = release_mem(it->second.mem);
    if (rc == CL_SUCCESS) erase_locked(it);
    return rc;
  }

  // (cl_mem, offset) for [ptr, ptr+bytes) when it lies inside one live
  // allocation, else nullopt.
  std::optional<Resolved> resolve(xal_devptr_t ptr, uint64_t bytes) const;

  // True when the allocation that starts at `ptr` is an imported buffer.
  bool imported_at(xal_devptr_t ptr) const;

  uint64_t allocated_bytes() const;
  size_t allocation_count() const;

  // Removes every allocation and returns their cl_mem for release.
  std::vector<cl_mem> take_all();

  bool contains_address(xal_devptr_t ptr) const {
    return ptr >= base_ && ptr - base_ < size_;
  }

 private:
  struct Allocation {
    cl_mem mem;
    uint64_t bytes;     // requested
    uint64_t reserved;  // rounded to the alignment
    bool imported;      // not counted in allocated_
  };
  // A free aligned range for `mem` (needs unique lock); nullopt when none.
  std::optional<xal_devptr_t> place_locked(cl_mem mem, uint64_t bytes, bool imported);
  void release_range(uint64_t start, uint64_t length);  // needs unique lock
  // Removes `it` from the live allocations (needs unique lock).
  void erase_locked(std::map<uint64_t, Allocation>::iterator it);

  const uint64_t base_;
  const uint64_t size_;
  mutable std::shared_mutex mutex_;
  std::map<uint64_t, Allocation> live_;  // by start address
  std::map<uint64_t, uint64_t> free_;    // start -> length, coalesced
  uint64_t allocated_ = 0;  // of buffers xal allocated, not imported ones
};

}  // namespace xal::opencl
