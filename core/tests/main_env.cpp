// Clears the xal environment before any test runs, so that the tests do not
// depend on the caller's settings.
#include <cstdlib>
#include <initializer_list>

namespace {

const bool kCleared = [] {
  for (const char* v :
       {"XAL_BACKENDS", "XAL_BACKEND_PATH", "XAL_DEVICE_SELECTOR",
        "XAL_VALIDATION", "XAL_MEMORY_LIMIT", "XAL_QUOTA_LEDGER",
        "XAL_FAULT_PLAN", "XAL_FAULTS",
        "XAL_TESTDEV_DEVICES", "XAL_TESTDEV_MEMORY", "XAL_TESTDEV_ASYNC",
        "XAL_TESTDEV_NO_HOST_PTR", "XAL_TESTDEV_FAIL_DTOH", "XAL_TESTDEV_HTOD_DELAY_MS",
        "XAL_TESTDEV_FAIL_COPIES",
        "XAL_COMM_TIMEOUT_MS",
        "XAL_COMM_CHUNK_BYTES", "XAL_COMM_FORCE_PATH", "XAL_TRACE",
        "XAL_TRACE_MAX_EVENTS", "XAL_PARTITIONS"})
    unsetenv(v);
  return true;
}();

}  // namespace
