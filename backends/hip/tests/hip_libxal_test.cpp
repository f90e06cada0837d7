// The HIP backend through libxal's public ABI, on the simulated runtime:
// what xal-info and the conformance suite see. The cases are shared by the
// vendor backends (backends/testing, xaltest/libxal_cases.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "xal/xal.h"
#include "xaltest/libxal_cases.h"

namespace {

using xaltest::ThroughLibxal;
using xaltest::ThroughLibxalUnavailable;

const xaltest::LibxalCase kHip{
    "hip",
    "AMD",
    "XAL_HIP_LIBRARY",
    XAL_HIP_SIM_PATH,
    "/nonexistent/libamdhip64.so.5",
    "XALSIM_HIP_FAIL",
    "hipMalloc=2",
    2,
    "hipErrorOutOfMemory"};

INSTANTIATE_TEST_SUITE_P(Hip, ThroughLibxal, ::testing::Values(kHip),
                         xaltest::case_name);
INSTANTIATE_TEST_SUITE_P(Hip, ThroughLibxalUnavailable, ::testing::Values(kHip),
                         xaltest::case_name);

std::string last_message() {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  return xal_last_error(&e) == XAL_SUCCESS ? e.message : "";
}

class HipFaultedDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("XALSIM_HIP_FAIL");
    ASSERT_EQ(xal_init(nullptr), XAL_SUCCESS) << last_message();
    ASSERT_EQ(xal_device_get(0, &dev_), XAL_SUCCESS);
  }
  void TearDown() override {
    unsetenv("XALSIM_HIP_FAIL");
    EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
  }
  xal_device_t dev_ = nullptr;
};

// After a sticky fault, destroying a stream and an event and freeing memory
// succeed (their work and memory went with the device), and the reset that
// follows releases nothing twice.
TEST_F(HipFaultedDevice, DestroyAfterAStickyFaultThenReset) {
  xal_stream_t stream = nullptr;
  xal_event_t event = nullptr;
  xal_devptr_t ptr = 0;
  ASSERT_EQ(xal_stream_create(dev_, 0, &stream), XAL_SUCCESS);
  ASSERT_EQ(xal_event_create(dev_, 0, &event), XAL_SUCCESS);
  ASSERT_EQ(xal_mem_alloc(dev_, 256, &ptr), XAL_SUCCESS);
  ASSERT_EQ(xal_event_record(event, stream), XAL_SUCCESS);
  setenv("XALSIM_HIP_FAIL", "hipStreamSynchronize=700", 1);
  EXPECT_EQ(xal_stream_synchronize(stream), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS) << last_message();
  EXPECT_EQ(xal_event_destroy(event), XAL_SUCCESS) << last_message();
  EXPECT_EQ(xal_mem_free(dev_, ptr), XAL_SUCCESS) << last_message();
  unsetenv("XALSIM_HIP_FAIL");
  ASSERT_EQ(xal_device_reset(dev_), XAL_SUCCESS) << last_message();
  ASSERT_EQ(xal_stream_create(dev_, 0, &stream), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS);
}

// A destroy whose own wait faults the device fails and keeps the stream;
// the retry, and a reset with objects still held, release everything once.
TEST_F(HipFaultedDevice, FailedDestroyIsRetriedThenReset) {
  xal_stream_t stream = nullptr;
  xal_stream_t kept = nullptr;
  xal_event_t event = nullptr;
  ASSERT_EQ(xal_stream_create(dev_, 0, &stream), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_create(dev_, 0, &kept), XAL_SUCCESS);
  ASSERT_EQ(xal_event_create(dev_, 0, &event), XAL_SUCCESS);
  setenv("XALSIM_HIP_FAIL", "hipStreamSynchronize=700@1", 1);
  EXPECT_EQ(xal_stream_destroy(stream), XAL_ERROR_DEVICE_LOST);
  unsetenv("XALSIM_HIP_FAIL");
  EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS) << last_message();
  // `kept` and `event` are released by the reset.
  ASSERT_EQ(xal_device_reset(dev_), XAL_SUCCESS) << last_message();
  xal_device_health_t health{};
  health.struct_size = sizeof health;
  ASSERT_EQ(xal_device_get_health(dev_, &health), XAL_SUCCESS);
  EXPECT_EQ(health.state, static_cast<uint32_t>(XAL_HEALTH_OK));
}

}  // namespace
