// The Level Zero backend through libxal's public ABI, on the simulated
// loader: what xal-info and the conformance suite see. The cases are shared
// by the vendor backends (backends/testing, xaltest/libxal_cases.h).
#include <xal/xal.h>

#include <cstdlib>

#include "xaltest/libxal_cases.h"

namespace {

using xaltest::ThroughLibxal;
using xaltest::ThroughLibxalUnavailable;

const xaltest::LibxalCase kLevelZero{
    "levelzero",
    "Intel",
    "XAL_LEVELZERO_LIBRARY",
    XAL_ZE_SIM_PATH,
    "/nonexistent/libze_loader.so.1",
    "XALSIM_ZE_FAIL",
    "zeMemAllocDevice=0x70000003",
    0x70000003,
    "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"};

INSTANTIATE_TEST_SUITE_P(LevelZero, ThroughLibxal, ::testing::Values(kLevelZero),
                         xaltest::case_name);
INSTANTIATE_TEST_SUITE_P(LevelZero, ThroughLibxalUnavailable,
                         ::testing::Values(kLevelZero), xaltest::case_name);

// libxal on the simulated loader (two devices), with nothing injected.
class ZeLibxal : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("XAL_LEVELZERO_LIBRARY", XAL_ZE_SIM_PATH, 1);
    unsetenv("XALSIM_ZE_FAIL");
    xal_init_options_t options{sizeof options, "levelzero", nullptr, nullptr, -1, 0};
    ASSERT_EQ(xal_init(&options), XAL_SUCCESS);
    ASSERT_EQ(xal_device_get(0, &device_), XAL_SUCCESS);
  }
  void TearDown() override {
    unsetenv("XALSIM_ZE_FAIL");
    EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
  }
  xal_device_t device_ = nullptr;
};

// A destroy whose wait for the queued work gives up keeps the stream: the
// handle stays valid and the destroy can be tried again.
TEST_F(ZeLibxal, StreamDestroyThatTimesOutCanBeRetried) {
  xal_stream_t stream = nullptr;
  ASSERT_EQ(xal_stream_create(device_, 0, &stream), XAL_SUCCESS);
  xal_devptr_t ptr = 0;
  ASSERT_EQ(xal_mem_alloc(device_, 256, &ptr), XAL_SUCCESS);
  ASSERT_EQ(xal_memset(stream, ptr, 1, 256), XAL_SUCCESS);
  setenv("XALSIM_ZE_FAIL", "zeEventHostSynchronize=1", 1);
  EXPECT_EQ(xal_stream_destroy(stream), XAL_ERROR_TIMEOUT);
  unsetenv("XALSIM_ZE_FAIL");
  EXPECT_EQ(xal_stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(device_, ptr), XAL_SUCCESS);
}

// On a lost device the queued work never finishes: the stream is released
// and the reset that follows does not touch it again.
TEST_F(ZeLibxal, StreamDestroyOnALostDeviceReleasesIt) {
  xal_stream_t stream = nullptr;
  ASSERT_EQ(xal_stream_create(device_, 0, &stream), XAL_SUCCESS);
  xal_devptr_t ptr = 0;
  ASSERT_EQ(xal_mem_alloc(device_, 256, &ptr), XAL_SUCCESS);
  ASSERT_EQ(xal_memset(stream, ptr, 1, 256), XAL_SUCCESS);
  setenv("XALSIM_ZE_FAIL", "zeEventHostSynchronize=0x70000001@1", 1);
  EXPECT_EQ(xal_stream_synchronize(stream), XAL_ERROR_DEVICE_LOST);
  unsetenv("XALSIM_ZE_FAIL");
  EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS);
  EXPECT_EQ(xal_device_reset(device_), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_create(device_, 0, &stream), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS);
}

// An event or allocation the driver refuses to release stays, for a retry.
TEST_F(ZeLibxal, RefusedEventDestroyAndFreeCanBeRetried) {
  xal_event_t event = nullptr;
  ASSERT_EQ(xal_event_create(device_, 0, &event), XAL_SUCCESS);
  setenv("XALSIM_ZE_FAIL", "zeEventDestroy=0x7ffffffe", 1);
  EXPECT_EQ(xal_event_destroy(event), XAL_ERROR_BACKEND);
  unsetenv("XALSIM_ZE_FAIL");
  EXPECT_EQ(xal_event_destroy(event), XAL_SUCCESS);

  xal_devptr_t ptr = 0;
  ASSERT_EQ(xal_mem_alloc(device_, 256, &ptr), XAL_SUCCESS);
  setenv("XALSIM_ZE_FAIL", "zeMemFree=0x7ffffffe", 1);
  EXPECT_EQ(xal_mem_free(device_, ptr), XAL_ERROR_BACKEND);
  unsetenv("XALSIM_ZE_FAIL");
  EXPECT_EQ(xal_mem_free(device_, ptr), XAL_SUCCESS);
}

}  // namespace
