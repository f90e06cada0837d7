// Group "faults": run through the fault backend (XAL_BACKENDS=fault:<name>).
// Every error of every vendor profile (docs/FAULTS.md) surfaces through the
// public ABI with its status, vendor code and name, and with the profile's
// stickiness: a sticky error fails every later call and shows in
// xal_device_get_health until xal_device_reset; the device works again
// after the reset. Devices of other backends report the group unsupported.
#include <xal/xal_fault.h>

#include <cstdint>
#include <string>
#include <vector>

#include "conform.hpp"
#include "helpers.hpp"

namespace {

struct ProfileError {
  const char* profile;
  const char* name;
  int64_t code;
  xal_status_t status;
  bool sticky;
};

// The documented profiles (docs/FAULTS.md), as the suite expects them: the
// status and stickiness the real backends give these codes.
const ProfileError kProfileErrors[] = {
    {"cuda", "CUDA_ERROR_INVALID_VALUE", 1, XAL_ERROR_INVALID_ARGUMENT, false},
    {"cuda", "CUDA_ERROR_OUT_OF_MEMORY", 2, XAL_ERROR_OUT_OF_MEMORY, false},
    {"cuda", "CUDA_ERROR_NOT_INITIALIZED", 3, XAL_ERROR_NOT_INITIALIZED, false},
    {"cuda", "CUDA_ERROR_DEVICE_UNAVAILABLE", 46, XAL_ERROR_BACKEND_UNAVAILABLE, false},
    {"cuda", "CUDA_ERROR_NO_DEVICE", 100, XAL_ERROR_BACKEND_UNAVAILABLE, false},
    {"cuda", "CUDA_ERROR_INVALID_DEVICE", 101, XAL_ERROR_INVALID_ARGUMENT, false},
    {"cuda", "CUDA_ERROR_ECC_UNCORRECTABLE", 214, XAL_ERROR_HARDWARE, true},
    {"cuda", "CUDA_ERROR_NVLINK_UNCORRECTABLE", 220, XAL_ERROR_HARDWARE, true},
    {"cuda", "CUDA_ERROR_INVALID_HANDLE", 400, XAL_ERROR_INVALID_HANDLE, false},
    {"cuda", "CUDA_ERROR_ILLEGAL_ADDRESS", 700, XAL_ERROR_DEVICE_LOST, true},
    {"cuda", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701, XAL_ERROR_INVALID_ARGUMENT, false},
    {"cuda", "CUDA_ERROR_LAUNCH_TIMEOUT", 702, XAL_ERROR_TIMEOUT, true},
    {"cuda", "CUDA_ERROR_ASSERT", 710, XAL_ERROR_DEVICE_LOST, true},
    {"cuda", "CUDA_ERROR_HARDWARE_STACK_ERROR", 714, XAL_ERROR_DEVICE_LOST, true},
    {"cuda", "CUDA_ERROR_ILLEGAL_INSTRUCTION", 715, XAL_ERROR_DEVICE_LOST, true},
    {"cuda", "CUDA_ERROR_MISALIGNED_ADDRESS", 716, XAL_ERROR_DEVICE_LOST, true},
    {"cuda", "CUDA_ERROR_LAUNCH_FAILED", 719, XAL_ERROR_DEVICE_LOST, true},
    {"cuda", "CUDA_ERROR_NOT_SUPPORTED", 801, XAL_ERROR_NOT_SUPPORTED, false},
    {"cuda", "CUDA_ERROR_TIMEOUT", 909, XAL_ERROR_TIMEOUT, false},
    {"cuda", "CUDA_ERROR_UNKNOWN", 999, XAL_ERROR_BACKEND, false},
    {"hip", "hipErrorInvalidValue", 1, XAL_ERROR_INVALID_ARGUMENT, false},
    {"hip", "hipErrorOutOfMemory", 2, XAL_ERROR_OUT_OF_MEMORY, false},
    {"hip", "hipErrorNotInitialized", 3, XAL_ERROR_NOT_INITIALIZED, false},
    {"hip", "hipErrorNoDevice", 100, XAL_ERROR_BACKEND_UNAVAILABLE, false},
    {"hip", "hipErrorInvalidDevice", 101, XAL_ERROR_INVALID_ARGUMENT, false},
    {"hip", "hipErrorECCNotCorrectable", 214, XAL_ERROR_HARDWARE, true},
    {"hip", "hipErrorInvalidHandle", 400, XAL_ERROR_INVALID_HANDLE, false},
    {"hip", "hipErrorIllegalAddress", 700, XAL_ERROR_DEVICE_LOST, true},
    {"hip", "hipErrorLaunchOutOfResources", 701, XAL_ERROR_INVALID_ARGUMENT, false},
    {"hip", "hipErrorLaunchTimeOut", 702, XAL_ERROR_TIMEOUT, true},
    {"hip", "hipErrorAssert", 710, XAL_ERROR_DEVICE_LOST, true},
    {"hip", "hipErrorLaunchFailure", 719, XAL_ERROR_DEVICE_LOST, true},
    {"hip", "hipErrorNotSupported", 801, XAL_ERROR_NOT_SUPPORTED, false},
    {"hip", "hipErrorUnknown", 999, XAL_ERROR_BACKEND, false},
    {"hip", "hipErrorRuntimeMemory", 1052, XAL_ERROR_OUT_OF_HOST_MEMORY, false},
    {"hip", "hipErrorRuntimeOther", 1053, XAL_ERROR_BACKEND, false},
    {"levelzero", "ZE_RESULT_ERROR_DEVICE_LOST", 0x70000001, XAL_ERROR_DEVICE_LOST, true},
    {"levelzero", "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY", 0x70000002, XAL_ERROR_OUT_OF_HOST_MEMORY, false},
    {"levelzero", "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", 0x70000003, XAL_ERROR_OUT_OF_MEMORY, false},
    {"levelzero", "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET", 0x70000006, XAL_ERROR_DEVICE_LOST, true},
    {"levelzero", "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE", 0x70000007, XAL_ERROR_BACKEND, false},
    {"levelzero", "ZE_RESULT_ERROR_UNINITIALIZED", 0x78000001, XAL_ERROR_NOT_INITIALIZED, false},
    {"levelzero", "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE", 0x78000003, XAL_ERROR_NOT_SUPPORTED, false},
    {"levelzero", "ZE_RESULT_ERROR_INVALID_ARGUMENT", 0x78000004, XAL_ERROR_INVALID_ARGUMENT, false},
    {"levelzero", "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE", 0x70000004, XAL_ERROR_INVALID_ARGUMENT, false},
    {"levelzero", "ZE_RESULT_ERROR_INVALID_NULL_HANDLE", 0x78000005, XAL_ERROR_INVALID_HANDLE, false},
    {"levelzero", "ZE_RESULT_ERROR_INVALID_SIZE", 0x78000008, XAL_ERROR_INVALID_ARGUMENT, false},
    {"levelzero", "ZE_RESULT_ERROR_UNKNOWN", 0x7ffffffe, XAL_ERROR_BACKEND, false},
    {"opencl", "CL_DEVICE_NOT_FOUND", -1, XAL_ERROR_BACKEND_UNAVAILABLE, false},
    {"opencl", "CL_DEVICE_NOT_AVAILABLE", -2, XAL_ERROR_BACKEND_UNAVAILABLE, false},
    {"opencl", "CL_MEM_OBJECT_ALLOCATION_FAILURE", -4, XAL_ERROR_OUT_OF_MEMORY, false},
    {"opencl", "CL_OUT_OF_RESOURCES", -5, XAL_ERROR_OUT_OF_MEMORY, false},
    {"opencl", "CL_OUT_OF_HOST_MEMORY", -6, XAL_ERROR_OUT_OF_HOST_MEMORY, false},
    {"opencl", "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST", -14, XAL_ERROR_ABORTED, false},
    {"opencl", "CL_INVALID_VALUE", -30, XAL_ERROR_INVALID_ARGUMENT, false},
    {"opencl", "CL_BUILD_PROGRAM_FAILURE", -11, XAL_ERROR_INVALID_ARGUMENT, false},
    {"opencl", "CL_INVALID_COMMAND_QUEUE", -36, XAL_ERROR_INVALID_HANDLE, false},
    {"opencl", "CL_INVALID_MEM_OBJECT", -38, XAL_ERROR_INVALID_HANDLE, false},
    {"opencl", "CL_INVALID_KERNEL_ARGS", -52, XAL_ERROR_INVALID_ARGUMENT, false},
    {"opencl", "CL_INVALID_WORK_GROUP_SIZE", -54, XAL_ERROR_INVALID_ARGUMENT, false},
    {"opencl", "CL_INVALID_OPERATION", -59, XAL_ERROR_INVALID_ARGUMENT, false},
    {"opencl", "CL_INVALID_BUFFER_SIZE", -61, XAL_ERROR_INVALID_ARGUMENT, false},};

class Faults : public conform::DeviceTest {
 protected:
  void SetUp() override {
    conform::DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (std::string(props().backend).rfind("fault(", 0) != 0) {
      GTEST_SKIP() << conform::kUnsupported << "device of backend '"
                   << props().backend
                   << "': run under XAL_BACKENDS=fault:<backend>";
    }
    uint32_t rules = 0;
    XAL_ASSERT_OK(xal_fault_rule_count(&rules));
    XAL_ASSERT_OK(xal_fault_clear());
  }
  void TearDown() override {
    if (IsSkipped() || !has_device()) return;
    EXPECT_EQ(xal_fault_clear(), XAL_SUCCESS);
    xal_device_health_t h{};
    h.struct_size = sizeof h;
    if (xal_device_get_health(dev(), &h) == XAL_SUCCESS &&
        h.state != XAL_HEALTH_OK) {
      xal_device_reset(dev());
    }
    EXPECT_EQ(conform::round_trip(dev()), "")
        << "the device does not work after the test";
  }
  // A rule for this device only (its index within the wrapped backend).
  std::string rule(const std::string& op, const std::string& terms) const {
    return op + "=device(" + std::to_string(props().backend_index) + ")" + terms;
  }
  xal_device_health_t health() const {
    xal_device_health_t h{};
    h.struct_size = sizeof h;
    EXPECT_EQ(xal_device_get_health(dev(), &h), XAL_SUCCESS);
    return h;
  }
};

TEST_P(Faults, EveryProfileErrorSurfaces) {
  for (const auto& e : kProfileErrors) {
    SCOPED_TRACE(std::string(e.profile) + ":" + e.name);
    XAL_ASSERT_OK(xal_fault_load_plan(
        rule("mem_alloc", std::string("nth(1)") + e.profile + ":" + e.name).c_str(),
        XAL_FAULT_PLAN_REPLACE));
    xal_devptr_t p = 0;
    EXPECT_EQ(xal_mem_alloc(dev(), 256, &p), e.status);
    const auto info = conform::last_error();
    EXPECT_EQ(info.status, e.status);
    EXPECT_EQ(info.vendor_code, e.code);
    EXPECT_STREQ(info.vendor_name, e.name);
    EXPECT_STRNE(info.message, "");
    const auto h = health();
    if (e.sticky) {
      EXPECT_EQ(h.state, e.status == XAL_ERROR_DEVICE_LOST
                             ? static_cast<uint32_t>(XAL_HEALTH_LOST)
                             : static_cast<uint32_t>(XAL_HEALTH_ERROR));
      EXPECT_EQ(h.sticky_status, e.status);
      EXPECT_EQ(h.vendor_code, e.code);
      // Sticky: the next call fails the same way, until reset.
      EXPECT_EQ(xal_device_synchronize(dev()), e.status);
      EXPECT_EQ(conform::last_error().vendor_code, e.code);
      XAL_ASSERT_OK(xal_device_reset(dev()));
      EXPECT_EQ(health().state, static_cast<uint32_t>(XAL_HEALTH_OK));
    } else {
      EXPECT_EQ(h.state, static_cast<uint32_t>(XAL_HEALTH_OK));
    }
    XAL_ASSERT_OK(xal_mem_alloc(dev(), 256, &p));
    XAL_ASSERT_OK(xal_mem_free(dev(), p));
  }
}

TEST_P(Faults, AsyncErrorAtNextSynchronize) {
  conform::Stream s(dev());
  XAL_ASSERT_OK(s.status());
  conform::DeviceBuffer buf(dev(), 4096);
  XAL_ASSERT_OK(buf.status());
  XAL_ASSERT_OK(xal_fault_load_plan(
      rule("memset", "nth(1)async(cuda:CUDA_ERROR_ILLEGAL_ADDRESS)").c_str(), 0));
  XAL_ASSERT_OK(xal_memset(s.get(), buf.ptr(), 1, buf.bytes()));
  EXPECT_EQ(xal_stream_synchronize(s.get()), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(conform::last_error().vendor_code, 700);
  EXPECT_EQ(health().state, static_cast<uint32_t>(XAL_HEALTH_LOST));
  XAL_ASSERT_OK(xal_device_reset(dev()));
  buf.release();  // invalidated by the reset; the error is expected
}

TEST_P(Faults, BitflipIsSilent) {
  conform::Stream s(dev());
  XAL_ASSERT_OK(s.status());
  const size_t n = 64 * 1024;
  conform::DeviceBuffer buf(dev(), n);
  XAL_ASSERT_OK(buf.status());
  std::vector<uint8_t> in(n), out(n);
  conform::fill_pattern(in, 11);
  XAL_ASSERT_OK(xal_fault_load_plan(rule("memcpy_htod", "nth(1)bitflip(1)").c_str(), 0));
  XAL_ASSERT_OK(xal_memcpy_htod(s.get(), buf.ptr(), in.data(), n));
  XAL_ASSERT_OK(xal_memcpy_dtoh(s.get(), out.data(), buf.ptr(), n));
  XAL_ASSERT_OK(xal_stream_synchronize(s.get()));
  int bits = 0;
  for (size_t i = 0; i < n; ++i) bits += __builtin_popcount(in[i] ^ out[i]);
  EXPECT_EQ(bits, 1);
  EXPECT_EQ(health().state, static_cast<uint32_t>(XAL_HEALTH_OK));
}

TEST_P(Faults, HangEndsInTimeout) {
  conform::Stream s(dev());
  XAL_ASSERT_OK(s.status());
  XAL_ASSERT_OK(xal_fault_load_plan(
      rule("stream_synchronize", "nth(1)hang(20)").c_str(), 0));
  EXPECT_EQ(xal_stream_synchronize(s.get()), XAL_ERROR_TIMEOUT);
  XAL_EXPECT_OK(xal_stream_synchronize(s.get()));
}

TEST_P(Faults, CountersAndRules) {
  XAL_ASSERT_OK(xal_fault_load_plan(rule("mem_alloc", "name(c)every(2)OUT_OF_MEMORY").c_str(), 0));
  xal_fault_counters_t before{};
  before.struct_size = sizeof before;
  XAL_ASSERT_OK(xal_fault_get_counters(&before));
  for (int i = 0; i < 4; ++i) {
    xal_devptr_t p = 0;
    if (xal_mem_alloc(dev(), 128, &p) == XAL_SUCCESS) xal_mem_free(dev(), p);
  }
  xal_fault_counters_t after{};
  after.struct_size = sizeof after;
  XAL_ASSERT_OK(xal_fault_get_counters(&after));
  EXPECT_EQ(after.injected - before.injected, 2u);
  xal_fault_rule_info_t info{};
  info.struct_size = sizeof info;
  XAL_ASSERT_OK(xal_fault_rule_get_info(0, &info));
  EXPECT_STREQ(info.name, "c");
  EXPECT_EQ(info.matched, 4u);
  EXPECT_EQ(info.fired, 2u);
}

XAL_CONFORM_DEVICE_GROUP(faults, Faults);

}  // namespace
