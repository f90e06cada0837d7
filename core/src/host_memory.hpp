// Page-locked host memory usable by every loaded backend (xal_host_alloc)
// and the staging buffers of cross-backend copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "runtime.hpp"

namespace xal::core {

class HostMemory {
 public:
  explicit HostMemory(Runtime& rt);
  ~HostMemory();

  // Allocates `bytes`: through the first backend with host_alloc (then
  // registered with the others), else page-aligned mapped memory, locked
  // when allowed and registered with every backend that has host_register.
  // Sets the error detail on failure. Thread-safe.
  xal_status_t allocate(size_t bytes, uint32_t flags, void** out_ptr);
  // Frees a pointer from allocate(); INVALID_ARGUMENT for any other.
  xal_status_t free(void* ptr);
  // Registers caller-owned memory with every backend that has
  // host_register (xal_host_register); INVALID_ARGUMENT when it overlaps
  // a registered or allocated range. Thread-safe.
  xal_status_t register_range(void* ptr, size_t bytes);
  // Undoes register_range(ptr, ...); INVALID_ARGUMENT for any other pointer.
  xal_status_t unregister_range(void* ptr);
  // Frees everything (shutdown).
  void release_all() noexcept;

 private:
  struct Block {
    size_t bytes = 0;
    Backend* owner = nullptr;  // backend that allocated it, or none
    bool locked = false;
    bool caller_owned = false;  // xal_host_register: never freed by xal
    std::vector<Backend*> registered;
  };
  void release(void* ptr, Block& block) noexcept;

  Runtime& rt_;
  std::mutex mu_;
  std::map<void*, Block> blocks_;
};

}  // namespace xal::core
