#include "status_map.h"

#include <array>

namespace xal::hip {
namespace {

using support::StatusEntry;

#define XAL_HIP_CODE(code, status, sticky) \
  StatusEntry{code, StatusMapping{status, #code, sticky}}

// Sticky codes: a kernel fault (700, 710, 719), a launch timeout (702) or an
// uncorrectable ECC error (214) leaves the HIP context unusable; every later
// call fails until hipDeviceReset.
constexpr auto kTable = std::array{
    XAL_HIP_CODE(hipSuccess, XAL_SUCCESS, false),
    XAL_HIP_CODE(hipErrorInvalidValue, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorOutOfMemory, XAL_ERROR_OUT_OF_MEMORY, false),
    XAL_HIP_CODE(hipErrorNotInitialized, XAL_ERROR_NOT_INITIALIZED, false),
    XAL_HIP_CODE(hipErrorDeinitialized, XAL_ERROR_NOT_INITIALIZED, false),
    XAL_HIP_CODE(hipErrorProfilerDisabled, XAL_ERROR_NOT_SUPPORTED, false),
    XAL_HIP_CODE(hipErrorProfilerNotInitialized, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorProfilerAlreadyStarted, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorProfilerAlreadyStopped, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorInvalidConfiguration, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorInvalidPitchValue, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorInvalidSymbol, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorInvalidDevicePointer, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorInvalidMemcpyDirection, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorInsufficientDriver, XAL_ERROR_BACKEND_UNAVAILABLE, false),
    XAL_HIP_CODE(hipErrorMissingConfiguration, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorPriorLaunchFailure, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorInvalidDeviceFunction, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorNoDevice, XAL_ERROR_BACKEND_UNAVAILABLE, false),
    XAL_HIP_CODE(hipErrorInvalidDevice, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorInvalidImage, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorInvalidContext, XAL_ERROR_INVALID_HANDLE, false),
    XAL_HIP_CODE(hipErrorContextAlreadyCurrent, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorMapFailed, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorUnmapFailed, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorArrayIsMapped, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorAlreadyMapped, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorNoBinaryForGpu, XAL_ERROR_NOT_SUPPORTED, false),
    XAL_HIP_CODE(hipErrorAlreadyAcquired, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorNotMapped, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorNotMappedAsArray, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorNotMappedAsPointer, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorECCNotCorrectable, XAL_ERROR_HARDWARE, true),
    XAL_HIP_CODE(hipErrorUnsupportedLimit, XAL_ERROR_NOT_SUPPORTED, false),
    XAL_HIP_CODE(hipErrorContextAlreadyInUse, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorPeerAccessUnsupported, XAL_ERROR_NOT_SUPPORTED, false),
    XAL_HIP_CODE(hipErrorInvalidKernelFile, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorInvalidGraphicsContext, XAL_ERROR_INVALID_HANDLE, false),
    XAL_HIP_CODE(hipErrorInvalidSource, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorFileNotFound, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorSharedObjectSymbolNotFound, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorSharedObjectInitFailed, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorOperatingSystem, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorInvalidHandle, XAL_ERROR_INVALID_HANDLE, false),
    XAL_HIP_CODE(hipErrorIllegalState, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorNotFound, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorNotReady, XAL_NOT_READY, false),
    XAL_HIP_CODE(hipErrorIllegalAddress, XAL_ERROR_DEVICE_LOST, true),
    XAL_HIP_CODE(hipErrorLaunchOutOfResources, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorLaunchTimeOut, XAL_ERROR_TIMEOUT, true),
    XAL_HIP_CODE(hipErrorPeerAccessAlreadyEnabled, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorPeerAccessNotEnabled, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorSetOnActiveProcess, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorContextIsDestroyed, XAL_ERROR_INVALID_HANDLE, false),
    XAL_HIP_CODE(hipErrorAssert, XAL_ERROR_DEVICE_LOST, true),
    XAL_HIP_CODE(hipErrorHostMemoryAlreadyRegistered, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorHostMemoryNotRegistered, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorLaunchFailure, XAL_ERROR_DEVICE_LOST, true),
    XAL_HIP_CODE(hipErrorCooperativeLaunchTooLarge, XAL_ERROR_INVALID_ARGUMENT, false),
    XAL_HIP_CODE(hipErrorNotSupported, XAL_ERROR_NOT_SUPPORTED, false),
    XAL_HIP_CODE(hipErrorStreamCaptureUnsupported, XAL_ERROR_NOT_SUPPORTED, false),
    XAL_HIP_CODE(hipErrorStreamCaptureInvalidated, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorStreamCaptureMerge, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorStreamCaptureUnmatched, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorStreamCaptureUnjoined, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorStreamCaptureIsolation, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorStreamCaptureImplicit, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorCapturedEvent, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorStreamCaptureWrongThread, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorGraphExecUpdateFailure, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorUnknown, XAL_ERROR_BACKEND, false),
    XAL_HIP_CODE(hipErrorRuntimeMemory, XAL_ERROR_OUT_OF_HOST_MEMORY, false),
    XAL_HIP_CODE(hipErrorRuntimeOther, XAL_ERROR_BACKEND, false),
};

#undef XAL_HIP_CODE

}  // namespace

StatusMapping map_status(int64_t hip_code) {
  return support::find_status(kTable, hip_code, "hipErrorUnrecognized");
}

}  // namespace xal::hip
