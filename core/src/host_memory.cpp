// Page-locked host memory.
#include "host_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include "error.hpp"

namespace xal::core {

HostMemory::HostMemory(Runtime& rt) : rt_(rt) {}

HostMemory::~HostMemory() { release_all(); }

xal_status_t HostMemory::allocate(size_t bytes, uint32_t flags, void** out_ptr) {
  Block block;
  block.bytes = bytes;
  void* p = nullptr;
  for (auto& b : rt_.backends) {
    if (!b->loaded() || !b->table->host_alloc) continue;
    const xal_status_t s = b->table->host_alloc(b->instance, bytes, flags, &p);
    if (s == XAL_SUCCESS && p) {
      block.owner = b.get();
      break;
    }
    p = nullptr;
    if (s == XAL_ERROR_OUT_OF_HOST_MEMORY || s == XAL_ERROR_OUT_OF_MEMORY)
      return fail_backend(b.get(), nullptr, XAL_ERROR_OUT_OF_HOST_MEMORY);
    clear_pending();
  }
  if (!p) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    if (bytes > SIZE_MAX - page)
      return fail(XAL_ERROR_OUT_OF_HOST_MEMORY,
                  cat("cannot allocate ", bytes, " bytes of host memory"));
    const size_t rounded = (bytes + page - 1) / page * page;
    p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      return fail(XAL_ERROR_OUT_OF_HOST_MEMORY,
                  cat("cannot map ", bytes, " bytes of host memory"));
    block.locked = mlock(p, rounded) == 0;
  }
  for (auto& b : rt_.backends) {
    if (!b->loaded() || b.get() == block.owner || !b->table->host_register)
      continue;
    if (b->table->host_register(b->instance, p, bytes) == XAL_SUCCESS)
      block.registered.push_back(b.get());
    else
      clear_pending();
  }
  try {
    std::lock_guard lock(mu_);
    blocks_.emplace(p, std::move(block));
  } catch (...) {
    release(p, block);
    throw;
  }
  *out_ptr = p;
  return XAL_SUCCESS;
}

void HostMemory::release(void* ptr, Block& block) noexcept {
  for (Backend* b : block.registered)
    if (b->table->host_unregister) b->table->host_unregister(b->instance, ptr);
  if (block.caller_owned) {
    // The caller's memory: only the registrations are undone.
  } else if (block.owner) {
    block.owner->table->host_free(block.owner->instance, ptr);
  } else {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t rounded = (block.bytes + page - 1) / page * page;
    if (block.locked) munlock(ptr, rounded);
    munmap(ptr, rounded);
  }
  clear_pending();
}

xal_status_t HostMemory::free(void* ptr) {
  Block block;
  {
    std::lock_guard lock(mu_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end())
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  cat("pointer ", ptr,
                      " was not returned by xal_host_alloc (or is already "
                      "freed)"));
    if (it->second.caller_owned)
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  cat("pointer ", ptr,
                      " was registered with xal_host_register: undo it with "
                      "xal_host_unregister"));
    block = std::move(it->second);
    blocks_.erase(it);
  }
  release(ptr, block);
  return XAL_SUCCESS;
}

xal_status_t HostMemory::register_range(void* ptr, size_t bytes) {
  const auto start = reinterpret_cast<uintptr_t>(ptr);
  Block block;
  block.bytes = bytes;
  block.caller_owned = true;
  std::lock_guard lock(mu_);
  // A block overlaps when the one starting at or before the range's last
  // byte ends after its start.
  auto it = blocks_.upper_bound(static_cast<char*>(ptr) + (bytes - 1));
  if (it != blocks_.begin()) {
    --it;
    const auto base = reinterpret_cast<uintptr_t>(it->first);
    if (base + it->second.bytes > start)
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  cat("host range [", ptr, ", +", bytes, ") overlaps [", it->first, ", +",
                      it->second.bytes, "), ",
                      it->second.caller_owned ? "already registered"
                                              : "memory of xal_host_alloc"));
  }
  for (auto& b : rt_.backends) {
    if (!b->loaded() || !b->table->host_register) continue;
    if (b->table->host_register(b->instance, ptr, bytes) == XAL_SUCCESS)
      block.registered.push_back(b.get());
    else
      clear_pending();  // that backend copies through its own staging
  }
  try {
    blocks_.emplace(ptr, std::move(block));
  } catch (...) {
    release(ptr, block);
    throw;
  }
  return XAL_SUCCESS;
}

xal_status_t HostMemory::unregister_range(void* ptr) {
  Block block;
  {
    std::lock_guard lock(mu_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end() || !it->second.caller_owned)
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  cat("pointer ", ptr,
                      it == blocks_.end()
                          ? " does not start a range registered with xal_host_register"
                          : " was returned by xal_host_alloc: free it with xal_host_free"));
    block = std::move(it->second);
    blocks_.erase(it);
  }
  release(ptr, block);
  return XAL_SUCCESS;
}

void HostMemory::release_all() noexcept {
  std::map<void*, Block> all;
  {
    std::lock_guard lock(mu_);
    all.swap(blocks_);
  }
  for (auto& [p, b] : all) release(p, b);
}

}  // namespace xal::core

using namespace xal::core;

extern "C" {

// Page-locked host memory owned by the caller. Thread-safe, also against
// xal_shutdown (RuntimeHold).
XAL_API xal_status_t xal_host_alloc(size_t bytes, uint32_t flags,
                                    void** out_ptr) {
  return entry("xal_host_alloc", [&] {
    const RuntimeHold hold;
    Runtime* rt = hold.get();
    if (!rt) return not_initialized();
    if (!out_ptr) return null_argument("out_ptr");
    if (bytes == 0)
      return fail(XAL_ERROR_INVALID_ARGUMENT, "cannot allocate 0 bytes");
    if (flags & ~XAL_HOST_ALLOC_WRITE_COMBINED)
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  cat("unknown host allocation flags ", hex(flags)));
    if (bytes > (size_t{1} << 52))
      return fail(XAL_ERROR_OUT_OF_HOST_MEMORY,
                  cat("cannot allocate ", bytes, " bytes of host memory"));
    return rt->host->allocate(bytes, flags, out_ptr);
  });
}

// Frees memory from xal_host_alloc. Thread-safe, also against xal_shutdown.
XAL_API xal_status_t xal_host_free(void* ptr) {
  return entry("xal_host_free", [&] {
    const RuntimeHold hold;
    Runtime* rt = hold.get();
    if (!rt) return not_initialized();
    if (!ptr) return null_argument("ptr");
    return rt->host->free(ptr);
  });
}

// Registers caller-owned host memory. Thread-safe, also against xal_shutdown.
XAL_API xal_status_t xal_host_register(void* ptr, size_t bytes, uint32_t flags) {
  return entry("xal_host_register", [&] {
    const RuntimeHold hold;
    Runtime* rt = hold.get();
    if (!rt) return not_initialized();
    if (!ptr) return null_argument("ptr");
    if (bytes == 0) return fail(XAL_ERROR_INVALID_ARGUMENT, "cannot register 0 bytes");
    if (flags != 0)
      return fail(XAL_ERROR_INVALID_ARGUMENT, cat("unknown host register flags ", hex(flags)));
    if (reinterpret_cast<uintptr_t>(ptr) + bytes < reinterpret_cast<uintptr_t>(ptr))
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  cat("host range [", ptr, ", +", bytes, ") wraps around"));
    return rt->host->register_range(ptr, bytes);
  });
}

// Undoes xal_host_register. Thread-safe, also against xal_shutdown.
XAL_API xal_status_t xal_host_unregister(void* ptr) {
  return entry("xal_host_unregister", [&] {
    const RuntimeHold hold;
    Runtime* rt = hold.get();
    if (!rt) return not_initialized();
    if (!ptr) return null_argument("ptr");
    return rt->host->unregister_range(ptr);
  });
}

}  // extern "C"
