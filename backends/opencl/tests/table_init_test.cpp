// Backend init through the table: a missing, too-old or failing OpenCL
// library gives BACKEND_UNAVAILABLE with the reason.
#include "table_harness.h"

#include <gtest/gtest.h>

#include <string>

namespace xal::opencl::testing {
namespace {

TEST(OpenclInit, MissingLibraryIsUnavailableWithDlerror) {
  ScopedEnv env("XAL_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1");
  Instance instance;
  EXPECT_EQ(instance.start(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(instance.get(), nullptr);
  const std::string& msg = last_error().message;
  EXPECT_NE(msg.find("/nonexistent/libOpenCL.so.1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such file or directory"), std::string::npos) << msg;
}

TEST(OpenclInit, LibraryWithoutOpenclIsTooOld) {
  ScopedEnv env("XAL_OPENCL_LIBRARY", "libm.so.6");
  Instance instance;
  EXPECT_EQ(instance.start(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(last_error().message, "libm.so.6 is too old: missing clGetPlatformIDs");
}

TEST(OpenclInit, BadDeviceTypeFilterIsExplained) {
  ScopedEnv env("XAL_OPENCL_DEVICE_TYPE", "fpga");
  Instance instance;
  const xal_status_t st = instance.start();
  EXPECT_EQ(st, XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_FALSE(last_error().message.empty());
}

TEST(OpenclInit, TableShape) {
  const xal_backend_table_t* t = plugin_table();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->struct_size, sizeof(xal_backend_table_t));
  EXPECT_EQ(t->abi_major, XAL_ABI_VERSION_MAJOR);
  EXPECT_STREQ(t->name, "opencl");
  EXPECT_NE(t->module_load, nullptr);
  EXPECT_NE(t->stream_enqueue_host_func, nullptr);
  EXPECT_EQ(t->comm_create, nullptr);  // the core's collectives path
}

TEST(OpenclInit, FakeWithoutPlatformIsUnavailable) {
  ScopedEnv lib("XAL_OPENCL_LIBRARY", XAL_FAKE_OPENCL);
  ScopedEnv mode("XAL_FAKE_OPENCL_MODE", "no_platform");
  Instance instance;
  EXPECT_EQ(instance.start(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(last_error().vendor_code, CL_PLATFORM_NOT_FOUND_KHR);
  EXPECT_EQ(last_error().vendor_name, "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_NE(last_error().message.find("no OpenCL platform is installed"), std::string::npos)
      << last_error().message;
}

TEST(OpenclInit, FakeWithoutDeviceIsUnavailable) {
  ScopedEnv lib("XAL_OPENCL_LIBRARY", XAL_FAKE_OPENCL);
  ScopedEnv mode("XAL_FAKE_OPENCL_MODE", "no_device");
  Instance instance;
  EXPECT_EQ(instance.start(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(last_error().message.find("no OpenCL device matches (platforms: 'Fake Platform')"),
            std::string::npos)
      << last_error().message;
}

TEST(OpenclInit, FakeContextFailureKeepsTheClCode) {
  ScopedEnv lib("XAL_OPENCL_LIBRARY", XAL_FAKE_OPENCL);
  ScopedEnv mode("XAL_FAKE_OPENCL_MODE", "context_fails");
  Instance instance;
  EXPECT_EQ(instance.start(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(last_error().vendor_code, CL_OUT_OF_HOST_MEMORY);
  EXPECT_NE(last_error().message.find("clCreateContext: CL_OUT_OF_HOST_MEMORY"),
            std::string::npos)
      << last_error().message;
  EXPECT_NE(last_error().message.find("Fake Platform"), std::string::npos);
}

TEST(OpenclInit, PlatformFilterThatMatchesNothing) {
  ScopedEnv lib("XAL_OPENCL_LIBRARY", XAL_FAKE_OPENCL);
  ScopedEnv mode("XAL_FAKE_OPENCL_MODE", "context_fails");
  ScopedEnv filter("XAL_OPENCL_PLATFORM", "no such vendor");
  Instance instance;
  EXPECT_EQ(instance.start(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(last_error().message.find("XAL_OPENCL_PLATFORM='no such vendor'"), std::string::npos)
      << last_error().message;
}

}  // namespace
}  // namespace xal::opencl::testing
