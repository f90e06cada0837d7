// The direct path's cache of opened IPC handles (p2p_ipc_cache.hpp).
#include "p2p_ipc_cache.hpp"

#include <cstring>

#include "../error.hpp"
#include "../handles.hpp"

namespace xal::core {

namespace {

// Runs one entry point of this library from inside another (a host step,
// a destruction) without changing the calling thread's operation name.
template <class F>
xal_status_t nested(F f) {
  const char* op = t_operation;
  const xal_status_t s = f();
  t_operation = op;
  return s;
}

std::string last_message() {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  return e.message;
}

}  // namespace

IpcMapping::~IpcMapping() {
  static_cast<void>(
      nested([&] { return xal_mem_close_ipc_handle(to_handle<xal_device_t>(device), ptr); }));
}

std::shared_ptr<const IpcMapping> IpcCache::open(DeviceObj* device,
                                                 const xal_ipc_handle_t& handle,
                                                 std::string* why) {
  std::string key(sizeof device + sizeof handle.bytes, '\0');
  std::memcpy(key.data(), &device, sizeof device);
  std::memcpy(key.data() + sizeof device, handle.bytes, sizeof handle.bytes);
  std::shared_ptr<const IpcMapping> evicted;  // closed after the lock is left
  std::lock_guard lock(mu_);
  if (const auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }
  xal_devptr_t ptr = 0;
  size_t bytes = 0;
  const xal_status_t s = nested([&] {
    return xal_mem_open_ipc_handle(to_handle<xal_device_t>(device), &handle, 0, &ptr, &bytes);
  });
  if (s != XAL_SUCCESS) {
    *why = last_message();
    return nullptr;
  }
  ++opened_;
  const xal_backend_table_t* t = device->hdr.table;
  const void* host = t->device_ptr_to_host ? t->device_ptr_to_host(device->native, ptr, bytes)
                                           : nullptr;
  std::shared_ptr<const IpcMapping> m;
  try {
    m = std::make_shared<const IpcMapping>(device, ptr, bytes, host);
  } catch (...) {
    nested([&] { return xal_mem_close_ipc_handle(to_handle<xal_device_t>(device), ptr); });
    throw;
  }
  if (lru_.size() >= capacity_) {
    evicted = std::move(lru_.back().second);
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  lru_.emplace_front(key, m);
  index_[std::move(key)] = lru_.begin();
  return m;
}

size_t IpcCache::size() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

size_t IpcCache::opened() const {
  std::lock_guard lock(mu_);
  return opened_;
}

}  // namespace xal::core
