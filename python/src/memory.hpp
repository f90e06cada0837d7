// Allocation: one range of device memory that xal knows -- allocated by
// xal_mem_alloc (owned), imported with xal_mem_import (the producer keeps
// owning it; `keepalive` holds the producer's object), or opened from an IPC
// handle. Released (xal_mem_free / xal_mem_close_ipc_handle) when Python
// drops the object: buffers, their views and DLPack exports hold a
// reference to it, so it lives until the last of them is gone.
#pragma once

#include <cstddef>
#include <string>

#include "handles.hpp"

namespace xalpy {

class Allocation : public Owned {
 public:
  enum class Kind { kOwned = 0, kImported = 1, kIpc = 2 };

  Allocation(Device device, xal_devptr_t ptr, size_t bytes, Kind kind, nb::object keepalive);
  ~Allocation();
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  const Device& device() const { return device_; }
  xal_devptr_t ptr() const { return ptr_; }
  size_t nbytes() const { return bytes_; }
  Kind kind() const { return kind_; }
  const nb::object& keepalive() const { return keepalive_; }
  // The device address of [offset, offset + bytes), which must lie inside the
  // allocation (raises OutOfBounds), of a live allocation (raises for a
  // closed or stale one).
  xal_devptr_t at(const char* operation, size_t offset, size_t bytes) const;

 private:
  xal_status_t release_call() const;

  Device device_;
  xal_devptr_t ptr_;
  size_t bytes_;
  Kind kind_;
  nb::object keepalive_;
};

void bind_memory(nb::module_& m);

}  // namespace xalpy
