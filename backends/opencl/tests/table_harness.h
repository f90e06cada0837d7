// Test harness: loads the OpenCL plugin straight from its file and drives
// its table with a services table of its own, so that the backend is tested
// without libxal.
#pragma once

#include "xal/xal_backend.h"
#include "xaltest/plugin_fixture.h"

#include <CL/cl.h>  // error codes the tests expect
#include <CL/cl_ext.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace xal::opencl::testing {

// The calling thread's last error reported through services->set_error.
struct RecordedError {
  xal_status_t status = XAL_SUCCESS;
  int64_t vendor_code = 0;
  std::string vendor_name;
  std::string message;
};
RecordedError& last_error();
const xal_backend_services_t* test_services();

// The plugin's table (dlopen of the built plugin); fails the test if absent.
const xal_backend_table_t* plugin_table();

// An instance of the backend, shut down at destruction.
class Instance {
 public:
  Instance() = default;
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  // Runs init; returns its status.
  xal_status_t start();
  // Runs shutdown now (once); returns its status.
  xal_status_t stop();
  xal_backend_t* get() const { return backend_; }

 private:
  xal_backend_t* backend_ = nullptr;
};

// Sets an environment variable for one scope (the backends' shared one).
using xaltest::ScopedEnv;

// A fixture with one started instance, device 0 and a stream on it. Skips
// (with the reason) when no OpenCL platform or device is present.
class OpenclTable : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  const xal_backend_table_t* t = nullptr;
  Instance instance;
  xal_bdevice_t* dev = nullptr;
  xal_bstream_t* stream = nullptr;
};

}  // namespace xal::opencl::testing
