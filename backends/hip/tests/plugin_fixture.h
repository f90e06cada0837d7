// Test fixture: loads the HIP plugin straight through its table, on the
// simulated runtime, with a services table that records the error detail
// the backend reports (shared part: backends/testing, xaltest/).
#pragma once

#include "xaltest/plugin_fixture.h"

namespace xal::hip::testing {

using xaltest::ErrorDetail;
using xaltest::last_error;
using xaltest::test_services;

// The plugin's table (dlopen'ed once per process).
inline const xal_backend_table_t* plugin_table() {
  return xaltest::open_plugin_table(XAL_HIP_PLUGIN_PATH);
}

// The simulated HIP runtime with two devices.
struct HipSimulation {
  static constexpr const char* kFailVariable = "XALSIM_HIP_FAIL";
  static const xal_backend_table_t* table() { return plugin_table(); }
  static void prepare() {
    setenv("XAL_HIP_LIBRARY", XAL_HIP_SIM_PATH, 1);
    setenv("XALSIM_HIP_DEVICES", "2", 1);
    unsetenv("XALSIM_HIP_PARTITIONS");
  }
};

using HipPlugin = xaltest::PluginTest<HipSimulation>;

// Starts an instance with the current environment, expecting failure.
inline xal_status_t init_expecting_failure() {
  return xaltest::init_expecting_failure(plugin_table());
}

}  // namespace xal::hip::testing
