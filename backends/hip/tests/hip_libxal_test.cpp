// The HIP backend through libxal's public ABI, on the simulated runtime:
// what xal-info and the conformance suite see.
#include <gtest/gtest.h>
#include <xal/xal.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

class HipThroughLibxal : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("XAL_HIP_LIBRARY", XAL_HIP_SIM_PATH, 1);
    unsetenv("XALSIM_HIP_FAIL");
    xal_init_options_t options{sizeof options, "hip", nullptr, nullptr, -1, 0};
    ASSERT_EQ(xal_init(&options), XAL_SUCCESS);
  }
  void TearDown() override { EXPECT_EQ(xal_shutdown(), XAL_SUCCESS); }
};

TEST_F(HipThroughLibxal, ListedAsSimulatedWithTwoDevices) {
  uint32_t backends = 0;
  ASSERT_EQ(xal_backend_count(&backends), XAL_SUCCESS);
  ASSERT_EQ(backends, 1u);
  xal_backend_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_backend_get_info(0, &info), XAL_SUCCESS);
  EXPECT_STREQ(info.name, "hip");
  EXPECT_EQ(info.state, static_cast<uint32_t>(XAL_BACKEND_STATE_LOADED)) << info.reason;
  EXPECT_TRUE(info.flags & XAL_BACKEND_FLAG_SIMULATED);
  EXPECT_EQ(info.device_count, 2u);
  uint32_t devices = 0;
  ASSERT_EQ(xal_device_count(&devices), XAL_SUCCESS);
  EXPECT_EQ(devices, 2u);
  xal_device_t device = nullptr;
  ASSERT_EQ(xal_device_get(1, &device), XAL_SUCCESS);
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(xal_device_get_properties(device, &p), XAL_SUCCESS);
  EXPECT_STREQ(p.backend, "hip");
  EXPECT_STREQ(p.vendor, "AMD");
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_SIMULATED);
}

TEST_F(HipThroughLibxal, CopyRoundTripAndVendorErrorDetail) {
  xal_device_t device = nullptr;
  ASSERT_EQ(xal_device_get(0, &device), XAL_SUCCESS);
  xal_stream_t stream = nullptr;
  ASSERT_EQ(xal_stream_create(device, 0, &stream), XAL_SUCCESS);
  xal_devptr_t ptr = 0;
  ASSERT_EQ(xal_mem_alloc(device, 4097, &ptr), XAL_SUCCESS);
  std::vector<uint8_t> in(4097), out(4097);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7);
  ASSERT_EQ(xal_memcpy_htod(stream, ptr, in.data(), in.size()), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_dtoh(stream, out.data(), ptr, out.size()), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(in, out);

  setenv("XALSIM_HIP_FAIL", "hipMalloc=2", 1);
  xal_devptr_t other = 0;
  EXPECT_EQ(xal_mem_alloc(device, 64, &other), XAL_ERROR_OUT_OF_MEMORY);
  unsetenv("XALSIM_HIP_FAIL");
  xal_error_info_t error{};
  error.struct_size = sizeof error;
  ASSERT_EQ(xal_last_error(&error), XAL_SUCCESS);
  EXPECT_EQ(error.status, XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(error.vendor_code, 2);
  EXPECT_STREQ(error.vendor_name, "hipErrorOutOfMemory");
  EXPECT_STREQ(error.backend, "hip");
  EXPECT_EQ(xal_mem_free(device, ptr), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS);
}

TEST(HipThroughLibxalUnavailable, MissingRuntimeIsListedWithTheReason) {
  setenv("XAL_HIP_LIBRARY", "/nonexistent/libamdhip64.so.5", 1);
  xal_init_options_t options{sizeof options, "hip", nullptr, nullptr, -1, 0};
  ASSERT_EQ(xal_init(&options), XAL_SUCCESS);
  xal_backend_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_backend_get_info(0, &info), XAL_SUCCESS);
  EXPECT_EQ(info.state, static_cast<uint32_t>(XAL_BACKEND_STATE_UNAVAILABLE));
  EXPECT_NE(std::string(info.reason).find("No such file"), std::string::npos) << info.reason;
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
  setenv("XAL_HIP_LIBRARY", XAL_HIP_SIM_PATH, 1);
}

}  // namespace
