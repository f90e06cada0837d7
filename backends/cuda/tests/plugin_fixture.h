// plugin_fixture.h -- loads the CUDA plugin straight through its table,
// with a small services table that records error detail, for the tests that
// run against the simulated driver (SIMULATION ONLY: no GPU involved).
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "xal/xal_backend.h"

namespace xal::cuda::test {

// Error detail the plugin reported last on this thread.
struct Reported {
  xal_status_t status = XAL_SUCCESS;
  int64_t vendor_code = 0;
  std::string vendor_name;
  std::string message;
};

inline thread_local Reported last_reported;

inline xal_status_t record_error(xal_status_t status, int64_t code,
                                 const char* name, const char* message) {
  last_reported = Reported{status, code, name != nullptr ? name : "",
                           message != nullptr ? message : ""};
  return status;
}
inline void log_line(int, const char*, const char*) {}
inline xal_status_t no_load(const char*, const xal_backend_table_t**, char*,
                            size_t) {
  return XAL_ERROR_NOT_SUPPORTED;
}
inline const char* read_env(const char* key) { return std::getenv(key); }

inline const xal_backend_services_t kServices = {
    sizeof(xal_backend_services_t), XAL_ABI_VERSION, record_error, log_line,
    no_load, read_env};

// The plugin's table, loaded once per process.
inline const xal_backend_table_t* plugin_table() {
  static const xal_backend_table_t* table = [] {
    void* handle = dlopen(XAL_CUDA_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return static_cast<const xal_backend_table_t*>(nullptr);
    auto get = reinterpret_cast<xal_backend_get_fn>(
        dlsym(handle, XAL_BACKEND_ENTRY_SYMBOL));
    return get != nullptr ? get(XAL_ABI_VERSION) : nullptr;
  }();
  return table;
}

// Starts a backend instance on the simulated driver for each test.
class CudaSim : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("XALSIM_CUDA_FAIL");
    table_ = plugin_table();
    ASSERT_NE(table_, nullptr) << "cannot load " XAL_CUDA_PLUGIN_PATH;
    xal_backend_init_args_t args{sizeof args, &kServices, nullptr};
    const xal_status_t s = table_->init(&args, &backend_);
    ASSERT_EQ(s, XAL_SUCCESS) << last_reported.message;
    uint32_t count = 0;
    ASSERT_EQ(table_->device_count(backend_, &count), XAL_SUCCESS);
    ASSERT_GE(count, 2u) << "the simulation is configured with 2 devices";
    ASSERT_EQ(table_->device_get(backend_, 0, &dev0_), XAL_SUCCESS);
    ASSERT_EQ(table_->device_get(backend_, 1, &dev1_), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_create(dev0_, 0, &stream0_), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_create(dev1_, 0, &stream1_), XAL_SUCCESS);
  }
  void TearDown() override {
    unsetenv("XALSIM_CUDA_FAIL");
    if (backend_ != nullptr) {
      EXPECT_EQ(table_->shutdown(backend_), XAL_SUCCESS);
    }
  }

  xal_devptr_t alloc(xal_bdevice_t* dev, size_t bytes) {
    xal_devptr_t p = 0;
    EXPECT_EQ(table_->mem_alloc(dev, bytes, &p), XAL_SUCCESS)
        << last_reported.message;
    return p;
  }

  const xal_backend_table_t* table_ = nullptr;
  xal_backend_t* backend_ = nullptr;
  xal_bdevice_t* dev0_ = nullptr;
  xal_bdevice_t* dev1_ = nullptr;
  xal_bstream_t* stream0_ = nullptr;
  xal_bstream_t* stream1_ = nullptr;
};

}  // namespace xal::cuda::test
