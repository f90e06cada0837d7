#include "address_map.h"

#include <iterator>
#include <mutex>

namespace xal::opencl {

AddressSpace::AddressSpace(uint64_t base, uint64_t size) : base_(base), size_(size) {
  free_.emplace(base, size);
}

std::optional<xal_devptr_t> AddressSpace::insert(cl_mem mem, uint64_t bytes,
                                                 uint64_t limit, bool* over_limit) {
  *over_limit = false;
  if (bytes == 0 || bytes > size_) return std::nullopt;
  std::unique_lock lock(mutex_);
  if (bytes > limit || allocated_ > limit - bytes) {
    *over_limit = true;
    return std::nullopt;
  }
  return place_locked(mem, bytes, false);
}

std::optional<xal_devptr_t> AddressSpace::insert_imported(cl_mem mem, uint64_t bytes) {
  if (bytes == 0 || bytes > size_) return std::nullopt;
  std::unique_lock lock(mutex_);
  return place_locked(mem, bytes, true);
}

std::optional<xal_devptr_t> AddressSpace::place_locked(cl_mem mem, uint64_t bytes,
                                                       bool imported) {
  const uint64_t reserved =
      (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < reserved) continue;
    const uint64_t start = it->first;
    const uint64_t rest = it->second - reserved;
    free_.erase(it);
    if (rest > 0) free_.emplace(start + reserved, rest);
    live_.emplace(start, Allocation{mem, bytes, reserved, imported});
    if (!imported) allocated_ += bytes;
    return start;
  }
  return std::nullopt;
}

void AddressSpace::release_range(uint64_t start, uint64_t length) {
  auto next = free_.lower_bound(start);
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      length += prev->second;
      free_.erase(prev);
    }
  }
  if (next != free_.end() && start + length == next->first) {
    length += next->second;
    free_.erase(next);
  }
  free_.emplace(start, length);
}

void AddressSpace::erase_locked(std::map<uint64_t, Allocation>::iterator it) {
  const uint64_t start = it->first;
  const Allocation a = it->second;
  live_.erase(it);
  if (!a.imported) allocated_ -= a.bytes;
  release_range(start, a.reserved);
}

cl_mem AddressSpace::erase(xal_devptr_t ptr) {
  std::unique_lock lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return nullptr;
  const cl_mem mem = it->second.mem;
  erase_locked(it);
  return mem;
}

std::optional<Resolved> AddressSpace::resolve(xal_devptr_t ptr, uint64_t bytes) const {
  std::shared_lock lock(mutex_);
  auto it = live_.upper_bound(ptr);
  if (it == live_.begin()) return std::nullopt;
  --it;
  const uint64_t offset = ptr - it->first;
  if (offset >= it->second.bytes || bytes > it->second.bytes - offset) {
    return std::nullopt;
  }
  return Resolved{it->second.mem, offset, it->first, it->second.bytes};
}

bool AddressSpace::imported_at(xal_devptr_t ptr) const {
  std::shared_lock lock(mutex_);
  const auto it = live_.find(ptr);
  return it != live_.end() && it->second.imported;
}

uint64_t AddressSpace::allocated_bytes() const {
  std::shared_lock lock(mutex_);
  return allocated_;
}

size_t AddressSpace::allocation_count() const {
  std::shared_lock lock(mutex_);
  return live_.size();
}

std::vector<cl_mem> AddressSpace::take_all() {
  std::unique_lock lock(mutex_);
  std::vector<cl_mem> out;
  out.reserve(live_.size());
  for (const auto& [start, a] : live_) out.push_back(a.mem);
  live_.clear();
  free_.clear();
  free_.emplace(base_, size_);
  allocated_ = 0;
  return out;
}

}  // namespace xal::opencl
