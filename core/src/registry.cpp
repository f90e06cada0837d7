// Allocation registry.
#include "registry.hpp"

#include <mutex>

namespace xal::core {

namespace {

// The calling thread's last hits (a copy checks dst and src, so two).
struct CacheEntry {
  const Registry* registry;
  uint64_t version, base, size;
};
constinit thread_local CacheEntry t_cache[2]
    __attribute__((tls_model("initial-exec"))) = {};
constinit thread_local unsigned t_cache_next
    __attribute__((tls_model("initial-exec"))) = 0;

std::atomic<uint64_t> g_versions{1};

}  // namespace

uint64_t Registry::next_version() {
  return g_versions.fetch_add(1, std::memory_order_relaxed);
}

void Registry::add(uint64_t base, uint64_t size) {
  std::unique_lock lock(mu_);
  ranges_[base] = size;
}

std::optional<uint64_t> Registry::remove(uint64_t base) {
  std::unique_lock lock(mu_);
  auto it = ranges_.find(base);
  if (it == ranges_.end()) return std::nullopt;
  const uint64_t size = it->second;
  ranges_.erase(it);
  version_.store(next_version(), std::memory_order_release);
  return size;
}

bool Registry::contains(uint64_t ptr, uint64_t bytes, Range* nearest) const {
  const uint64_t version = version_.load(std::memory_order_acquire);
  for (const CacheEntry& c : t_cache) {
    if (c.registry == this && c.version == version) {
      const uint64_t offset = ptr - c.base;
      if (offset < c.size && bytes <= c.size - offset) return true;
    }
  }
  Range found;
  if (!contains_locked(ptr, bytes, &found)) {
    if (nearest) *nearest = found;
    return false;
  }
  t_cache[t_cache_next] = CacheEntry{this, version, found.base, found.size};
  t_cache_next ^= 1u;
  return true;
}

bool Registry::contains_locked(uint64_t ptr, uint64_t bytes,
                               Range* nearest) const {
  std::shared_lock lock(mu_);
  auto it = ranges_.upper_bound(ptr);
  if (it == ranges_.begin()) {
    if (nearest) *nearest = Range{};
    return false;
  }
  --it;
  const uint64_t base = it->first, size = it->second;
  if (nearest) *nearest = Range{base, size};
  const uint64_t offset = ptr - base;
  return offset < size && bytes <= size - offset;
}

std::optional<Registry::Range> Registry::containing(uint64_t ptr, uint64_t bytes) const {
  Range found;
  if (bytes == 0 || !contains_locked(ptr, bytes, &found)) return std::nullopt;
  return found;
}

std::optional<uint64_t> Registry::find(uint64_t base) const {
  std::shared_lock lock(mu_);
  auto it = ranges_.find(base);
  if (it == ranges_.end()) return std::nullopt;
  return it->second;
}

std::vector<Registry::Range> Registry::snapshot() const {
  std::shared_lock lock(mu_);
  std::vector<Range> out;
  out.reserve(ranges_.size());
  for (const auto& [b, s] : ranges_) out.push_back(Range{b, s});
  return out;
}

void Registry::clear() {
  std::unique_lock lock(mu_);
  ranges_.clear();
  version_.store(next_version(), std::memory_order_release);
}

size_t Registry::count() const {
  std::shared_lock lock(mu_);
  return ranges_.size();
}

}  // namespace xal::core
