// Mappings of other processes' device memory for the direct path of
// point-to-point messages (p2p_direct.hpp): each IPC handle is opened once
// on the receiving device (xal_mem_open_ipc_handle) and kept, up to a
// bound, least recently used first out. A mapping is closed when it leaves
// the cache and the last copy from it is over, or with the cache.
#pragma once

#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "../objects.hpp"
#include "xal/xal.h"

namespace xal::core {

// One opened handle: device memory of another process, mapped here.
// Closes the mapping (xal_mem_close_ipc_handle) on destruction. Immutable
// after opening: any thread may read it.
struct IpcMapping {
  IpcMapping(DeviceObj* d, xal_devptr_t p, size_t n, const void* h)
      : device(d), ptr(p), bytes(n), host(h) {}
  ~IpcMapping();
  IpcMapping(const IpcMapping&) = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;

  DeviceObj* const device;
  const xal_devptr_t ptr;  // on `device`
  const size_t bytes;      // the whole exported allocation
  const void* const host;  // host view of [ptr, ptr+bytes); null: none
};

class IpcCache {
 public:
  explicit IpcCache(size_t capacity) : capacity_(capacity ? capacity : 1) {}

  // The mapping of `handle` on `device`, opened now or found; shared with
  // the cache, so that an eviction during a copy does not unmap it. Null
  // with *why when the handle cannot be opened. Thread-safe.
  std::shared_ptr<const IpcMapping> open(DeviceObj* device, const xal_ipc_handle_t& handle,
                                         std::string* why);
  // Mappings the cache holds now. Thread-safe.
  size_t size() const;
  // Handles opened (cache misses) since creation. Thread-safe.
  size_t opened() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const IpcMapping>>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recently used first
  std::map<std::string, std::list<Entry>::iterator> index_;
  size_t opened_ = 0;
};

}  // namespace xal::core
