// main of the shared quota tests: GoogleTest, or a worker process when
// started with --quota-worker (quota_ledger_worker.hpp). The tests clear the
// caller's xal settings; workers keep the environment the tests give them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "quota_ledger_worker.hpp"

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--quota-worker")
    return xal_test::quota_worker_main();
  for (const char* v :
       {"XAL_BACKENDS", "XAL_BACKEND_PATH", "XAL_DEVICE_SELECTOR", "XAL_VALIDATION",
        "XAL_MEMORY_LIMIT", "XAL_QUOTA_LEDGER", "XAL_FAULT_PLAN", "XAL_FAULTS",
        "XAL_MOCK_DEVICES", "XAL_TESTDEV_DEVICES", "XAL_TESTDEV_MEMORY",
        "XAL_PARTITIONS"})
    unsetenv(v);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
