// Test harness: loads the built mock plugin with dlopen (path from CMake),
// gives it a services table that records errors per thread, and wraps an
// instance in RAII.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "xal/xal_backend.h"

namespace xal::mock::test {

// The plugin's table (loaded once, never unloaded).
const xal_backend_table_t& table();

// The last error the plugin reported on this thread.
struct LastError {
  xal_status_t status = XAL_SUCCESS;
  std::string message;
};
LastError last_error();
void clear_last_error();

// Sets what services->get_config("XAL_MOCK_DEVICES") returns (NULL when
// `unset`). Not thread-safe: call before init.
void set_mock_devices(const std::string& value, bool unset = false);

// Sets what get_config(key) returns for any other key (NULL when `unset`).
void set_config(const std::string& key, const std::string& value, bool unset = false);

const xal_backend_services_t* services();

// Inits an instance with `spec` as XAL_MOCK_DEVICES.
class Instance {
 public:
  explicit Instance(const std::string& spec, bool unset = false);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  xal_backend_t* backend() const { return backend_; }
  uint32_t count() const;
  xal_bdevice_t* device(uint32_t i) const;
  xal_devptr_t alloc(uint32_t dev, size_t bytes) const;
  xal_bstream_t* stream(uint32_t dev) const;
  xal_bevent_t* event(uint32_t dev, uint32_t flags = XAL_EVENT_DEFAULT) const;

 private:
  xal_backend_t* backend_ = nullptr;
};

// Host view of a device pointer (the mock's memory is host addressable).
void* host(xal_bdevice_t* device, xal_devptr_t ptr, size_t bytes);

}  // namespace xal::mock::test
