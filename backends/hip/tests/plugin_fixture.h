// Test fixture: loads the HIP plugin straight through its table, with a
// services table that records the error detail the backend reports.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "xal/xal_backend.h"

namespace xal::hip::testing {

struct ErrorDetail {
  xal_status_t status = XAL_SUCCESS;
  int64_t vendor_code = 0;
  std::string vendor_name;
  std::string message;
};

inline ErrorDetail& last_error() {
  thread_local ErrorDetail detail;
  return detail;
}

inline xal_status_t record_error(xal_status_t status, int64_t code,
                                 const char* name, const char* message) {
  last_error() = ErrorDetail{status, code, name ? name : "", message ? message : ""};
  return status;
}

inline void log_line(int, const char*, const char*) {}

inline const char* env_config(const char* key) { return std::getenv(key); }

inline const xal_backend_services_t* test_services() {
  static const xal_backend_services_t services = {
      sizeof(xal_backend_services_t), XAL_ABI_VERSION, record_error, log_line,
      nullptr, env_config};
  return &services;
}

// The plugin's table (dlopen'ed once per process).
inline const xal_backend_table_t* plugin_table() {
  static const xal_backend_table_t* table = [] {
    void* handle = dlopen(XAL_HIP_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return static_cast<const xal_backend_table_t*>(nullptr);
    auto get = reinterpret_cast<xal_backend_get_fn>(
        dlsym(handle, XAL_BACKEND_ENTRY_SYMBOL));
    return get != nullptr ? get(XAL_ABI_VERSION) : nullptr;
  }();
  return table;
}

class HipPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("XAL_HIP_LIBRARY", XAL_HIP_SIM_PATH, 1);
    setenv("XALSIM_HIP_DEVICES", "2", 1);
    unsetenv("XALSIM_HIP_FAIL");
    table_ = plugin_table();
    ASSERT_NE(table_, nullptr) << dlerror();
    ASSERT_EQ(init(), XAL_SUCCESS) << last_error().message;
    ASSERT_EQ(table_->device_get(backend_, 0, &dev0_), XAL_SUCCESS);
    ASSERT_EQ(table_->device_get(backend_, 1, &dev1_), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_create(dev0_, 0, &stream_), XAL_SUCCESS);
  }
  void TearDown() override {
    unsetenv("XALSIM_HIP_FAIL");
    if (backend_ != nullptr) {
      EXPECT_EQ(table_->shutdown(backend_), XAL_SUCCESS);
    }
  }
  xal_status_t init() {
    xal_backend_init_args_t args{sizeof args, test_services(), nullptr};
    return table_->init(&args, &backend_);
  }

  const xal_backend_table_t* table_ = nullptr;
  xal_backend_t* backend_ = nullptr;
  xal_bdevice_t* dev0_ = nullptr;
  xal_bdevice_t* dev1_ = nullptr;
  xal_bstream_t* stream_ = nullptr;
};

// Starts an instance with the current environment, expecting failure.
inline xal_status_t init_expecting_failure() {
  xal_backend_init_args_t args{sizeof args, test_services(), nullptr};
  xal_backend_t* backend = nullptr;
  xal_status_t status = plugin_table()->init(&args, &backend);
  if (status == XAL_SUCCESS) plugin_table()->shutdown(backend);
  return status;
}

}  // namespace xal::hip::testing
