// Vendor error profiles of the fault backend. Codes are the vendors' own,
// taken from cuda.h (CUresult), hip_runtime_api.h (hipError_t),
// ze_api.h (ze_result_t) and CL/cl.h. Each error has the xal status and
// stickiness that the real backend gives the code (backends/<vendor>/src/
// status_map.cpp), so that a program sees under `fault:` what it would see
// on the card; backends/<vendor>/tests/fault_profile_test.cpp checks this.
// CUDA and HIP kernel faults (illegal address, assert, launch failure) are
// DEVICE_LOST and ECC errors HARDWARE, both sticky until reset; Level
// Zero's DEVICE_LOST needs a device reset; OpenCL's errors are per call.
// A bare status under a profile takes the profile's first error with that
// status (find_vendor_error_for_status), so a status's plain code comes
// first: ZE_RESULT_ERROR_INVALID_ARGUMENT and CL_INVALID_VALUE before the
// build failures, which the backends also map to INVALID_ARGUMENT.
#include <array>

#include "../src/profiles.hpp"

namespace xal::fault {
namespace {

constexpr xal_status_t kOom = XAL_ERROR_OUT_OF_MEMORY;
constexpr xal_status_t kHostOom = XAL_ERROR_OUT_OF_HOST_MEMORY;
constexpr xal_status_t kArg = XAL_ERROR_INVALID_ARGUMENT;
constexpr xal_status_t kHandle = XAL_ERROR_INVALID_HANDLE;
constexpr xal_status_t kBackend = XAL_ERROR_BACKEND;
constexpr xal_status_t kLost = XAL_ERROR_DEVICE_LOST;
constexpr xal_status_t kHw = XAL_ERROR_HARDWARE;
constexpr xal_status_t kTimeout = XAL_ERROR_TIMEOUT;
constexpr xal_status_t kNotInit = XAL_ERROR_NOT_INITIALIZED;
constexpr xal_status_t kUnsupported = XAL_ERROR_NOT_SUPPORTED;
constexpr xal_status_t kUnavailable = XAL_ERROR_BACKEND_UNAVAILABLE;
constexpr xal_status_t kAborted = XAL_ERROR_ABORTED;

constexpr std::array kCuda = {
    VendorError{"CUDA_ERROR_INVALID_VALUE", 1, kArg, false},
    VendorError{"CUDA_ERROR_OUT_OF_MEMORY", 2, kOom, false},
    VendorError{"CUDA_ERROR_NOT_INITIALIZED", 3, kNotInit, false},
    VendorError{"CUDA_ERROR_DEVICE_UNAVAILABLE", 46, kUnavailable, false},
    VendorError{"CUDA_ERROR_NO_DEVICE", 100, kUnavailable, false},
    VendorError{"CUDA_ERROR_INVALID_DEVICE", 101, kArg, false},
    VendorError{"CUDA_ERROR_ECC_UNCORRECTABLE", 214, kHw, true},
    VendorError{"CUDA_ERROR_NVLINK_UNCORRECTABLE", 220, kHw, true},
    VendorError{"CUDA_ERROR_INVALID_HANDLE", 400, kHandle, false},
    VendorError{"CUDA_ERROR_ILLEGAL_ADDRESS", 700, kLost, true},
    VendorError{"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701, kArg, false},
    VendorError{"CUDA_ERROR_LAUNCH_TIMEOUT", 702, kTimeout, true},
    VendorError{"CUDA_ERROR_ASSERT", 710, kLost, true},
    VendorError{"CUDA_ERROR_HARDWARE_STACK_ERROR", 714, kLost, true},
    VendorError{"CUDA_ERROR_ILLEGAL_INSTRUCTION", 715, kLost, true},
    VendorError{"CUDA_ERROR_MISALIGNED_ADDRESS", 716, kLost, true},
    VendorError{"CUDA_ERROR_LAUNCH_FAILED", 719, kLost, true},
    VendorError{"CUDA_ERROR_NOT_SUPPORTED", 801, kUnsupported, false},
    VendorError{"CUDA_ERROR_TIMEOUT", 909, kTimeout, false},
    VendorError{"CUDA_ERROR_UNKNOWN", 999, kBackend, false},
};

constexpr std::array kHip = {
    VendorError{"hipErrorInvalidValue", 1, kArg, false},
    VendorError{"hipErrorOutOfMemory", 2, kOom, false},
    VendorError{"hipErrorNotInitialized", 3, kNotInit, false},
    VendorError{"hipErrorNoDevice", 100, kUnavailable, false},
    VendorError{"hipErrorInvalidDevice", 101, kArg, false},
    VendorError{"hipErrorECCNotCorrectable", 214, kHw, true},
    VendorError{"hipErrorInvalidHandle", 400, kHandle, false},
    VendorError{"hipErrorIllegalAddress", 700, kLost, true},
    VendorError{"hipErrorLaunchOutOfResources", 701, kArg, false},
    VendorError{"hipErrorLaunchTimeOut", 702, kTimeout, true},
    VendorError{"hipErrorAssert", 710, kLost, true},
    VendorError{"hipErrorLaunchFailure", 719, kLost, true},
    VendorError{"hipErrorNotSupported", 801, kUnsupported, false},
    VendorError{"hipErrorUnknown", 999, kBackend, false},
    VendorError{"hipErrorRuntimeMemory", 1052, kHostOom, false},
    VendorError{"hipErrorRuntimeOther", 1053, kBackend, false},
};

constexpr std::array kLevelZero = {
    VendorError{"ZE_RESULT_ERROR_DEVICE_LOST", 0x70000001, kLost, true},
    VendorError{"ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY", 0x70000002, kHostOom,
                false},
    VendorError{"ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", 0x70000003, kOom,
                false},
    VendorError{"ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET", 0x70000006, kLost,
                true},
    VendorError{"ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE", 0x70000007,
                kBackend, false},
    VendorError{"ZE_RESULT_ERROR_UNINITIALIZED", 0x78000001, kNotInit, false},
    VendorError{"ZE_RESULT_ERROR_UNSUPPORTED_FEATURE", 0x78000003,
                kUnsupported, false},
    VendorError{"ZE_RESULT_ERROR_INVALID_ARGUMENT", 0x78000004, kArg, false},
    VendorError{"ZE_RESULT_ERROR_MODULE_BUILD_FAILURE", 0x70000004, kArg,
                false},
    VendorError{"ZE_RESULT_ERROR_INVALID_NULL_HANDLE", 0x78000005, kHandle,
                false},
    VendorError{"ZE_RESULT_ERROR_INVALID_SIZE", 0x78000008, kArg, false},
    VendorError{"ZE_RESULT_ERROR_UNKNOWN", 0x7ffffffe, kBackend, false},
};

constexpr std::array kOpenCl = {
    VendorError{"CL_DEVICE_NOT_FOUND", -1, kUnavailable, false},
    VendorError{"CL_DEVICE_NOT_AVAILABLE", -2, kUnavailable, false},
    VendorError{"CL_MEM_OBJECT_ALLOCATION_FAILURE", -4, kOom, false},
    VendorError{"CL_OUT_OF_RESOURCES", -5, kOom, false},
    VendorError{"CL_OUT_OF_HOST_MEMORY", -6, kHostOom, false},
    VendorError{"CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST", -14, kAborted,
                false},
    VendorError{"CL_INVALID_VALUE", -30, kArg, false},
    VendorError{"CL_BUILD_PROGRAM_FAILURE", -11, kArg, false},
    VendorError{"CL_INVALID_COMMAND_QUEUE", -36, kHandle, false},
    VendorError{"CL_INVALID_MEM_OBJECT", -38, kHandle, false},
    VendorError{"CL_INVALID_KERNEL_ARGS", -52, kArg, false},
    VendorError{"CL_INVALID_WORK_GROUP_SIZE", -54, kArg, false},
    VendorError{"CL_INVALID_OPERATION", -59, kArg, false},
    VendorError{"CL_INVALID_BUFFER_SIZE", -61, kArg, false},
};

constexpr std::array kProfiles = {
    VendorProfile{"cuda", kCuda},
    VendorProfile{"hip", kHip},
    VendorProfile{"levelzero", kLevelZero},
    VendorProfile{"opencl", kOpenCl},
};

}  // namespace

std::span<const VendorProfile> vendor_profiles() { return kProfiles; }

}  // namespace xal::fault
