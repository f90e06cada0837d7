// Arena: a device's memory, one reserved mapping of the profile's size
// (a memory file, memfd, mapped MAP_SHARED|MAP_NORESERVE, so that another
// process can map an allocation through an IPC handle; anonymous memory
// where there is no memfd), so pages are committed only when touched. A best-fit allocator with
// coalescing hands out ranges of it; device pointers are the real addresses.
// Thread-safe: every member may be called concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

namespace xal::mock {

class Arena {
 public:
  static constexpr uint64_t kAlignment = 256;
  // Freed ranges at least this large are returned to the OS (MADV_DONTNEED).
  static constexpr uint64_t kReleaseThreshold = 1ull << 20;

  // Reserves `capacity` bytes (rounded down to kAlignment). Throws
  // std::system_error when the reservation fails.
  explicit Arena(uint64_t capacity);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  struct AllocResult {
    uint64_t address = 0;  // 0 when out of memory
    uint64_t free = 0;     // free bytes at the time of the call
    uint64_t largest = 0;  // largest free range
  };
  // Allocates `bytes` (> 0), 256-byte aligned. address 0 means no range fits.
  AllocResult allocate(uint64_t bytes);

  // Frees the allocation that starts at `address`; false if there is none.
  bool release(uint64_t address);

  // Drops every allocation (device reset) and returns all pages to the OS.
  void reset();

  uint64_t capacity() const { return capacity_; }
  uint64_t used() const;
  uint64_t base() const { return base_; }
  // The memory file behind the mapping, -1 when anonymous (no IPC).
  int fd() const { return fd_; }
  // True if [address, address+bytes) lies inside the mapping.
  bool contains(uint64_t address, uint64_t bytes) const {
    return address >= base_ && bytes <= capacity_ &&
           address - base_ <= capacity_ - bytes;
  }
  // Size of the live allocation starting at `address`, 0 if none.
  uint64_t allocation_size(uint64_t address) const;
  size_t allocation_count() const;

 private:
  void insert_free(uint64_t offset, uint64_t size);
  void erase_free(std::map<uint64_t, uint64_t>::iterator it);
  void release_pages(uint64_t offset, uint64_t size);

  uint64_t base_ = 0;
  int fd_ = -1;
  uint64_t capacity_ = 0;
  size_t map_length_ = 0;
  mutable std::mutex mutex_;
  uint64_t used_ = 0;
  std::map<uint64_t, uint64_t> free_by_offset_;         // offset -> size
  std::set<std::pair<uint64_t, uint64_t>> free_by_size_;  // (size, offset)
  std::unordered_map<uint64_t, uint64_t> live_;          // offset -> size
};

}  // namespace xal::mock
