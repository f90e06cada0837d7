// Memory blocks that other processes of the host can map: each block is a
// memfd of its own, mapped shared. The allocator of shared tensors
// (shared_tensors.cpp) makes them; the shared-memory transport looks a
// buffer up here, so that its peers read and write the buffer in place
// (zero-copy allreduce, shm_zero_copy.cpp), and maps the peers' blocks
// through /proc/<pid>/fd/<fd>. Torch-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>

namespace xal::torch_backend {

struct SharedBlock {
  uintptr_t base = 0;
  size_t bytes = 0;
  int fd = -1;      // the memfd, open while the block lives
  uint64_t id = 0;  // unique in the process, never reused
};

// A block of `bytes` (> 0), mapped read-write: a freed one of that size
// (up to 512 MiB of freed blocks are kept), else a new one; null on
// failure (errno set). Registered until free_shared_block. Thread-safe.
void* alloc_shared_block(size_t bytes);
// Unmaps and closes a block alloc_shared_block made. Thread-safe.
void free_shared_block(void* base);
// The block holding [p, p + bytes), if any. Thread-safe.
std::optional<SharedBlock> find_shared_block(const void* p, size_t bytes);

// Mappings of other processes' blocks, at most `capacity`, the least
// recently used unmapped first. Used by one thread at a time.
class PeerBlocks {
 public:
  explicit PeerBlocks(size_t capacity = 32) : capacity_(capacity) {}
  ~PeerBlocks();
  PeerBlocks(const PeerBlocks&) = delete;
  PeerBlocks& operator=(const PeerBlocks&) = delete;
  // Block `id` (fd `fd`, `bytes` long) of process `pid`, mapped here;
  // null when it cannot be (the process ended, no permission).
  char* map(int32_t pid, int fd, uint64_t id, size_t bytes);
  size_t mapped() const { return maps_.size(); }

 private:
  struct Map {
    int32_t pid;
    uint64_t id;
    char* addr;
    size_t bytes;
  };
  size_t capacity_;
  std::list<Map> maps_;  // most recently used first
};

}  // namespace xal::torch_backend
