// Entry point of xal-conform-suite: xal is initialised once, before
// GoogleTest registers the tests parameterised over its devices, and shut
// down after the last test.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "conform.hpp"
#include "events.hpp"

int main(int argc, char** argv) {
  try {
    conform::Suite::get().initialize();
    if (conform::Suite::get().init_status() != XAL_SUCCESS) {
      std::fprintf(stderr, "xal-conform-suite: xal_init failed: %s\n",
                   conform::Suite::get().init_message().c_str());
    }
    testing::InitGoogleTest(&argc, argv);
    if (auto writer = conform::make_event_writer(std::getenv("XAL_CONFORM_EVENTS"))) {
      testing::UnitTest::GetInstance()->listeners().Append(writer.release());
    }
    const int rc = RUN_ALL_TESTS();
    conform::Suite::get().finalize();
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xal-conform-suite: %s\n", e.what());
    return 2;
  }
}
