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
    unsetenv("XALSIM_ZE_DRIVERS");
    unsetenv("XALSIM_ZE_MAX_ALLOC");
    unsetenv("XALSIM_ZE_NPU");
    unsetenv("XALSIM_ZE_API_VERSION");
    unsetenv("XALSIM_ZE_TIMER_HZ");
    unsetenv("XALSIM_ZE_RAS_SOFT");
    unsetenv("XAL_LEVELZERO_SYNC_TIMEOUT_MS");
  }
};

class ZePlugin : public xaltest::PluginTest<ZeSimulation> {
 protected:
  // Starts the instance again with the current environment (a changed
  // simulator configuration): new dev0_, dev1_ and stream_.
  void restart() {
    ASSERT_EQ(table_->shutdown(backend_), XAL_SUCCESS);
    backend_ = nullptr;
    ASSERT_EQ(init(), XAL_SUCCESS) << last_error().message;
    ASSERT_EQ(table_->device_get(backend_, 0, &dev0_), XAL_SUCCESS);
    ASSERT_EQ(table_->device_get(backend_, 1, &dev1_), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_create(dev0_, 0, &stream_), XAL_SUCCESS);
  }
};

// A function the simulated loader exports for tests (the plugin has it
// loaded already), or null.
template <typename Function>
Function* simulator_hook(const char* name) {
  void* handle = dlopen(XAL_ZE_SIM_PATH, RTLD_NOW | RTLD_NOLOAD);
  return handle != nullptr ? reinterpret_cast<Function*>(dlsym(handle, name)) : nullptr;
}

// Starts an instance with the current environment, expecting failure.
inline xal_status_t init_expecting_failure() {
  return xaltest::init_expecting_failure(plugin_table());
}

}  // namespace xal::levelzero::testing
