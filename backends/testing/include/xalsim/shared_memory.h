// Device memory of the simulated drivers (HIP, Level Zero) that another
// process can map, for their simulated IPC handles (TESTS ONLY).
//
// Allocations are carved, page-aligned, out of one memfd per process
// (mapped in chunks as it grows, committed on touch; a freed block's pages
// go back to the kernel, so a new block reads zero). Another process maps a block
// through /proc/<pid>/fd/<fd> of the exporting process, which needs the
// same user and a live exporter: what the simulation can do without the
// kernel driver that gives real GPUs shareable memory. Where memfd is
// unavailable blocks are plain memory and cannot be shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace xalsim {

// Where a block lies, for another process to map it.
struct SharedRange {
  int32_t pid = 0;      // the exporting process
  int32_t fd = -1;      // its memfd, in that process
  uint64_t offset = 0;  // of the block in the file (page-aligned)
  uint64_t bytes = 0;
};

// Memory of a simulated allocation: from the process's shared heap, plain
// memory, or a mapping of another process's block. Move-only; frees or
// unmaps at destruction. Thread-safe between blocks.
class Block {
 public:
  // `bytes` (> 0) zero-filled at a multiple of `alignment` (a power of
  // two): from the shared heap, else (heap exhausted or unavailable) plain
  // memory. Empty when the host is out of memory.
  static Block allocate(size_t bytes, size_t alignment);
  // Maps `range` of another process. Empty, with the reason in `error`,
  // when it cannot be opened (the process ended, another user, no such
  // file) or mapped.
  static Block open(const SharedRange& range, std::string* error);

  Block() = default;
  Block(Block&& other) noexcept;
  Block& operator=(Block&& other) noexcept;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ~Block();

  explicit operator bool() const { return data_ != nullptr; }
  std::byte* data() const { return data_; }
  // Where the block lies, for a heap block; nullopt otherwise.
  std::optional<SharedRange> share() const;
  // Whether this maps another process's block.
  bool remote() const { return kind_ == Kind::kRemote; }

 private:
  enum class Kind { kNone, kHeap, kPlain, kRemote };
  void reset();

  Kind kind_ = Kind::kNone;
  void* base_ = nullptr;     // what was allocated or mapped
  size_t length_ = 0;        // its length
  std::byte* data_ = nullptr;  // the aligned start handed out
  size_t bytes_ = 0;         // requested
};

}  // namespace xalsim
