#include "shared_blocks.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <map>

namespace xal::torch_backend {

namespace {

// Freed blocks are kept for reuse (by exact size, as training allocates
// the same shapes every step) up to kPoolBytes in all; a reused block keeps
// its id, so that the peers' mappings of it stay valid.
constexpr size_t kPoolBytes = size_t{512} << 20;

std::mutex g_mu;
std::map<uintptr_t, SharedBlock> g_blocks;        // live, by base (g_mu)
std::multimap<size_t, SharedBlock> g_pool;        // freed, by size (g_mu)
size_t g_pool_bytes = 0;                          // (g_mu)
std::atomic<uint64_t> g_next_id{1};

}  // namespace

void* alloc_shared_block(size_t bytes) {
  if (bytes == 0) return nullptr;
  {
    std::lock_guard lock(g_mu);
    auto it = g_pool.find(bytes);
    if (it != g_pool.end()) {
      const SharedBlock b = it->second;
      g_pool.erase(it);
      g_pool_bytes -= b.bytes;
      g_blocks[b.base] = b;
      return reinterpret_cast<void*>(b.base);
    }
  }
  const int fd = memfd_create("xal_torch_tensor", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int e = errno;
    close(fd);
    errno = e;
    return nullptr;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    close(fd);
    errno = e;
    return nullptr;
  }
  SharedBlock b{reinterpret_cast<uintptr_t>(p), bytes, fd, g_next_id.fetch_add(1)};
  std::lock_guard lock(g_mu);
  g_blocks[b.base] = b;
  return p;
}

void free_shared_block(void* base) {
  SharedBlock b;
  {
    std::lock_guard lock(g_mu);
    auto it = g_blocks.find(reinterpret_cast<uintptr_t>(base));
    if (it == g_blocks.end()) return;
    b = it->second;
    g_blocks.erase(it);
    if (g_pool_bytes + b.bytes <= kPoolBytes) {
      g_pool.emplace(b.bytes, b);
      g_pool_bytes += b.bytes;
      return;
    }
  }
  munmap(base, b.bytes);
  close(b.fd);
}

std::optional<SharedBlock> find_shared_block(const void* p, size_t bytes) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(g_mu);
  auto it = g_blocks.upper_bound(a);
  if (it == g_blocks.begin()) return std::nullopt;
  --it;
  const SharedBlock& b = it->second;
  if (a < b.base || a + bytes > b.base + b.bytes) return std::nullopt;
  return b;
}

PeerBlocks::~PeerBlocks() {
  for (const Map& m : maps_) munmap(m.addr, m.bytes);
}

char* PeerBlocks::map(int32_t pid, int fd, uint64_t id, size_t bytes) {
  for (auto it = maps_.begin(); it != maps_.end(); ++it)
    if (it->pid == pid && it->id == id && it->bytes == bytes) {
      maps_.splice(maps_.begin(), maps_, it);
      return it->addr;
    }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(pid), fd);
  const int mine = open(path, O_RDWR | O_CLOEXEC);
  if (mine < 0) return nullptr;
  struct stat st {};
  if (fstat(mine, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {  // not that block
    close(mine);
    return nullptr;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);
  close(mine);
  if (p == MAP_FAILED) return nullptr;
  maps_.push_front({pid, id, static_cast<char*>(p), bytes});
  while (maps_.size() > capacity_) {
    munmap(maps_.back().addr, maps_.back().bytes);
    maps_.pop_back();
  }
  return static_cast<char*>(p);
}

}  // namespace xal::torch_backend
