// plugin_fixture.h -- loads the CUDA plugin straight through its table,
// with a small services table that records error detail, for the tests that
// run against the simulated driver (SIMULATION ONLY: no GPU involved). The
// shared part lives in backends/testing (xaltest/plugin_fixture.h).
#pragma once

#include "xaltest/plugin_fixture.h"

namespace xal::cuda::test {

using xaltest::init_instance;
using xaltest::last_error;
using xaltest::ScopedEnv;
using xaltest::test_services;

// The plugin's table, loaded once per process.
inline const xal_backend_table_t* plugin_table() {
  return xaltest::open_plugin_table(XAL_CUDA_PLUGIN_PATH);
}

// The simulated driver as ctest configures it (XAL_CUDA_DRIVER,
// XALSIM_CUDA_DEVICES=2).
struct CudaSimulation {
  static constexpr const char* kFailVariable = "XALSIM_CUDA_FAIL";
  static const xal_backend_table_t* table() { return plugin_table(); }
  static void prepare() {}
};

// Starts a backend instance on the simulated driver for each test, with a
// stream on each of its two devices.
class CudaSim : public xaltest::PluginTest<CudaSimulation> {
 protected:
  void SetUp() override {
    PluginTest::SetUp();
    if (HasFatalFailure()) return;
    stream0_ = stream_;
    ASSERT_EQ(table_->stream_create(dev1_, 0, &stream1_), XAL_SUCCESS);
  }

  xal_devptr_t alloc(xal_bdevice_t* dev, size_t bytes) {
    xal_devptr_t p = 0;
    EXPECT_EQ(table_->mem_alloc(dev, bytes, &p), XAL_SUCCESS)
        << last_error().message;
    return p;
  }

  xal_bstream_t* stream0_ = nullptr;  // the base's stream_, on dev0_
  xal_bstream_t* stream1_ = nullptr;
};

}  // namespace xal::cuda::test
