#include "arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace xal::mock {

namespace {

uint64_t page_size() {
  static const uint64_t size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

Arena::Arena(uint64_t capacity) : capacity_(capacity / kAlignment * kAlignment) {
  const uint64_t page = page_size();
  map_length_ = static_cast<size_t>((capacity_ + page - 1) / page * page);
  // A memory file, so that another process can map an allocation (IPC
  // handles); anonymous memory where the kernel has no memfd.
  fd_ = memfd_create("xal-mock-arena", MFD_CLOEXEC);
  if (fd_ >= 0 && ftruncate(fd_, static_cast<off_t>(map_length_)) != 0) {
    close(fd_);
    fd_ = -1;
  }
  void* p = fd_ >= 0 ? mmap(nullptr, map_length_, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_NORESERVE, fd_, 0)
                     : mmap(nullptr, map_length_, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED && fd_ >= 0) close(fd_);
  if (p == MAP_FAILED)
    throw std::system_error(errno, std::generic_category(),
                            "cannot reserve " + std::to_string(capacity_) +
                                " bytes of address space for the device arena");
  base_ = reinterpret_cast<uint64_t>(p);
  insert_free(0, capacity_);
}

Arena::~Arena() {
  if (base_) munmap(reinterpret_cast<void*>(base_), map_length_);
  if (fd_ >= 0) close(fd_);
}

void Arena::insert_free(uint64_t offset, uint64_t size) {
  free_by_offset_.emplace(offset, size);
  free_by_size_.emplace(size, offset);
}

void Arena::erase_free(std::map<uint64_t, uint64_t>::iterator it) {
  free_by_size_.erase({it->second, it->first});
  free_by_offset_.erase(it);
}

void Arena::release_pages(uint64_t offset, uint64_t size) {
  const uint64_t page = page_size();
  const uint64_t begin = (offset + page - 1) / page * page;
  const uint64_t end = (offset + size) / page * page;
  if (end > begin)
    madvise(reinterpret_cast<void*>(base_ + begin), end - begin,
            fd_ >= 0 ? MADV_REMOVE : MADV_DONTNEED);
}

Arena::AllocResult Arena::allocate(uint64_t bytes) {
  AllocResult r;
  std::lock_guard lock(mutex_);
  r.free = capacity_ - used_;
  r.largest = free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
  if (bytes == 0 || bytes > capacity_) return r;
  const uint64_t size = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  // Best fit: the smallest free range that holds `size`, lowest offset first.
  auto fit = free_by_size_.lower_bound({size, 0});
  if (fit == free_by_size_.end()) return r;
  const uint64_t offset = fit->second;
  const uint64_t range = fit->first;
  erase_free(free_by_offset_.find(offset));
  if (range > size) insert_free(offset + size, range - size);
  live_.emplace(offset, size);
  used_ += size;
  r.address = base_ + offset;
  r.free = capacity_ - used_;
  return r;
}

bool Arena::release(uint64_t address) {
  if (address < base_ || address >= base_ + capacity_) return false;
  std::lock_guard lock(mutex_);
  const uint64_t offset = address - base_;
  auto it = live_.find(offset);
  if (it == live_.end()) return false;
  uint64_t start = offset, size = it->second;
  const uint64_t freed = size;
  live_.erase(it);
  used_ -= size;
  // Coalesce with the free neighbours.
  auto next = free_by_offset_.lower_bound(offset);
  if (next != free_by_offset_.end() && next->first == offset + size) {
    size += next->second;
    erase_free(next);
  }
  auto after = free_by_offset_.lower_bound(offset);
  if (after != free_by_offset_.begin()) {
    auto prev = std::prev(after);
    if (prev->first + prev->second == offset) {
      start = prev->first;
      size += prev->second;
      erase_free(prev);
    }
  }
  insert_free(start, size);
  if (freed >= kReleaseThreshold) release_pages(start, size);
  return true;
}

void Arena::reset() {
  std::lock_guard lock(mutex_);
  live_.clear();
  free_by_offset_.clear();
  free_by_size_.clear();
  used_ = 0;
  insert_free(0, capacity_);
  release_pages(0, capacity_);
}

uint64_t Arena::used() const {
  std::lock_guard lock(mutex_);
  return used_;
}

uint64_t Arena::allocation_size(uint64_t address) const {
  if (address < base_) return 0;
  std::lock_guard lock(mutex_);
  auto it = live_.find(address - base_);
  return it == live_.end() ? 0 : it->second;
}

size_t Arena::allocation_count() const {
  std::lock_guard lock(mutex_);
  return live_.size();
}

}  // namespace xal::mock
