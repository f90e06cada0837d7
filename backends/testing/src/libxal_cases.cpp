#include "xaltest/libxal_cases.h"

#include <xal/xal.h>

#include <cstdlib>
#include <vector>

namespace xaltest {

std::string case_name(const ::testing::TestParamInfo<LibxalCase>& info) {
  return info.param.backend;
}

void ThroughLibxal::SetUp() {
  const LibxalCase& c = GetParam();
  setenv(c.library_variable, c.simulated_library, 1);
  unsetenv(c.fail_variable);
  xal_init_options_t options{sizeof options, c.backend, nullptr, nullptr, -1, 0};
  ASSERT_EQ(xal_init(&options), XAL_SUCCESS);
}

void ThroughLibxal::TearDown() { EXPECT_EQ(xal_shutdown(), XAL_SUCCESS); }

TEST_P(ThroughLibxal, ListedAsSimulatedWithTwoDevices) {
  const LibxalCase& c = GetParam();
  uint32_t backends = 0;
  ASSERT_EQ(xal_backend_count(&backends), XAL_SUCCESS);
  ASSERT_EQ(backends, 1u);
  xal_backend_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_backend_get_info(0, &info), XAL_SUCCESS);
  EXPECT_STREQ(info.name, c.backend);
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
  EXPECT_STREQ(p.backend, c.backend);
  EXPECT_STREQ(p.vendor, c.vendor);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_SIMULATED);
}

TEST_P(ThroughLibxal, CopyRoundTripAndVendorErrorDetail) {
  const LibxalCase& c = GetParam();
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

  setenv(c.fail_variable, c.alloc_failure, 1);
  xal_devptr_t other = 0;
  EXPECT_EQ(xal_mem_alloc(device, 64, &other), XAL_ERROR_OUT_OF_MEMORY);
  unsetenv(c.fail_variable);
  xal_error_info_t error{};
  error.struct_size = sizeof error;
  ASSERT_EQ(xal_last_error(&error), XAL_SUCCESS);
  EXPECT_EQ(error.status, XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(error.vendor_code, c.out_of_memory_code);
  EXPECT_STREQ(error.vendor_name, c.out_of_memory_name);
  EXPECT_STREQ(error.backend, c.backend);
  EXPECT_EQ(xal_mem_free(device, ptr), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS);
}

TEST_P(ThroughLibxalUnavailable, MissingRuntimeIsListedWithTheReason) {
  const LibxalCase& c = GetParam();
  setenv(c.library_variable, c.missing_library, 1);
  xal_init_options_t options{sizeof options, c.backend, nullptr, nullptr, -1, 0};
  ASSERT_EQ(xal_init(&options), XAL_SUCCESS);
  xal_backend_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_backend_get_info(0, &info), XAL_SUCCESS);
  EXPECT_EQ(info.state, static_cast<uint32_t>(XAL_BACKEND_STATE_UNAVAILABLE));
  EXPECT_NE(std::string(info.reason).find("No such file"), std::string::npos) << info.reason;
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
  setenv(c.library_variable, c.simulated_library, 1);
}

}  // namespace xaltest
