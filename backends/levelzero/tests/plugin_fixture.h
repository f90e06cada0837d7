// Test fixture: loads the Level Zero plugin straight through its table, on
// the simulated loader, with a services table that records the error
// detail the backend reports (shared part: backends/testing, xaltest/).
#pragma once

#include "xaltest/plugin_fixture.h"

namespace xal::levelzero::testing {

using xaltest::ErrorDetail;
using xaltest::last_error;
using xaltest::test_services;

// The plugin's table (dlopen'ed once per process).
inline const xal_backend_table_t* plugin_table() {
  return xaltest::open_plugin_table(XAL_ZE_PLUGIN_PATH);
}

// The simulated loader with two root devices and no sub-devices.
struct ZeSimulation {
  static constexpr const char* kFailVariable = "XALSIM_ZE_FAIL";
  static const xal_backend_table_t* table() { return plugin_table(); }
  static void prepare() {
    setenv("XAL_LEVELZERO_LIBRARY", XAL_ZE_SIM_PATH, 1);
    setenv("XALSIM_ZE_DEVICES", "2", 1);
    setenv("XALSIM_ZE_SUBDEVICES", "0", 1);
    unsetenv("XALSIM_ZE_NO_PEER");
    unsetenv("XALSIM_ZE_NO_IN_ORDER");
    unsetenv("XAL_LEVELZERO_SUBDEVICES");
  }
};

using ZePlugin = xaltest::PluginTest<ZeSimulation>;

// Starts an instance with the current environment, expecting failure.
inline xal_status_t init_expecting_failure() {
  return xaltest::init_expecting_failure(plugin_table());
}

}  // namespace xal::levelzero::testing
