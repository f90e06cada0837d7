// symbols.h -- the one list of every CUDA driver function the backend
// uses, as an X-macro of entries X(KIND, name, since):
//   KIND   REQUIRED (a driver without it makes the backend UNAVAILABLE; the
//          reason names it and the CUDA version needed) or OPTIONAL (the
//          feature is left out);
//   since  the CUDA version whose signature we call, in the driver's own
//          encoding (1000 * major + 10 * minor: 12080 is CUDA 12.8), as
//          spelt by the typedef PFN_<name>_v<since> of cudaTypedefs.h; it
//          is the cudaVersion handed to cuGetProcAddress, so that the driver
//          returns the matching variant (cuMemAlloc -> cuMemAlloc_v2 and so
//          on), and the first CUDA version that has that variant.
//
// The driver refuses (CUDA_ERROR_INVALID_VALUE) a version newer than itself,
// so a function whose newest variant is newer than the oldest driver we
// support also lists, in XAL_CUDA_SYMBOL_FALLBACKS, an older variant with
// the same signature to ask for instead (dynamic_symbols.cpp checks the
// signatures match at compile time).
#pragma once

#include <cstdint>
#include <string>

#define XAL_CUDA_SYMBOLS(X)                       \
  X(REQUIRED, cuGetErrorName, 6000)               \
  X(REQUIRED, cuGetErrorString, 6000)             \
  X(REQUIRED, cuInit, 2000)                       \
  X(REQUIRED, cuDriverGetVersion, 2020)           \
  X(REQUIRED, cuDeviceGet, 2000)                  \
  X(REQUIRED, cuDeviceGetCount, 2000)             \
  X(REQUIRED, cuDeviceGetName, 2000)              \
  X(OPTIONAL, cuDeviceGetUuid, 11040)             \
  X(REQUIRED, cuDeviceTotalMem, 3020)             \
  X(REQUIRED, cuDeviceGetAttribute, 2000)         \
  X(OPTIONAL, cuDeviceGetPCIBusId, 4010)          \
  X(REQUIRED, cuDevicePrimaryCtxRetain, 7000)     \
  X(REQUIRED, cuDevicePrimaryCtxRelease, 11000)   \
  X(REQUIRED, cuDevicePrimaryCtxReset, 11000)     \
  X(REQUIRED, cuCtxSetCurrent, 4000)              \
  X(REQUIRED, cuCtxGetCurrent, 4000)              \
  X(REQUIRED, cuCtxSynchronize, 2000)             \
  X(REQUIRED, cuMemGetInfo, 3020)                 \
  X(REQUIRED, cuMemAlloc, 3020)                   \
  X(REQUIRED, cuMemFree, 3020)                    \
  X(OPTIONAL, cuPointerGetAttribute, 4000)        \
  X(OPTIONAL, cuMemGetAddressRange, 3020)         \
  X(OPTIONAL, cuIpcGetMemHandle, 4010)            \
  X(OPTIONAL, cuIpcOpenMemHandle, 11000)          \
  X(OPTIONAL, cuIpcCloseMemHandle, 4010)          \
  X(REQUIRED, cuMemHostAlloc, 2020)               \
  X(REQUIRED, cuMemFreeHost, 2000)                \
  X(OPTIONAL, cuMemHostRegister, 6050)            \
  X(OPTIONAL, cuMemHostUnregister, 4000)          \
  X(OPTIONAL, cuMemHostGetDevicePointer, 3020)    \
  X(REQUIRED, cuMemcpyHtoDAsync, 3020)            \
  X(REQUIRED, cuMemcpyDtoHAsync, 3020)            \
  X(REQUIRED, cuMemcpyDtoDAsync, 3020)            \
  X(OPTIONAL, cuMemcpyPeerAsync, 4000)            \
  X(REQUIRED, cuMemsetD8Async, 3020)              \
  X(OPTIONAL, cuDeviceCanAccessPeer, 4000)        \
  X(OPTIONAL, cuCtxEnablePeerAccess, 4000)        \
  X(REQUIRED, cuStreamCreate, 2000)               \
  X(REQUIRED, cuStreamDestroy, 4000)              \
  X(REQUIRED, cuStreamSynchronize, 2000)          \
  X(REQUIRED, cuStreamQuery, 2000)                \
  X(OPTIONAL, cuStreamGetCtx, 9020)               \
  X(REQUIRED, cuStreamWaitEvent, 3020)            \
  X(OPTIONAL, cuLaunchHostFunc, 10000)            \
  X(OPTIONAL, cuStreamWaitValue32, 11070)         \
  X(REQUIRED, cuEventCreate, 2000)                \
  X(REQUIRED, cuEventDestroy, 4000)               \
  X(REQUIRED, cuEventRecord, 2000)                \
  X(REQUIRED, cuEventSynchronize, 2000)           \
  X(REQUIRED, cuEventQuery, 2000)                 \
  X(REQUIRED, cuEventElapsedTime, 12080)          \
  X(OPTIONAL, cuModuleLoadDataEx, 2010)           \
  X(OPTIONAL, cuModuleUnload, 2000)               \
  X(OPTIONAL, cuModuleGetFunction, 2000)          \
  X(OPTIONAL, cuLaunchKernel, 4000)               \
  X(OPTIONAL, cuFuncSetAttribute, 9000)

// X(name, since, older): on a driver older than `since`, ask for `older`
// (same signature, see the typedefs).
#define XAL_CUDA_SYMBOL_FALLBACKS(X) \
  X(cuEventElapsedTime, 12080, 2000) \
  X(cuStreamWaitValue32, 11070, 8000)

namespace xal::cuda {

// "CUDA 12.8" for 12080.
inline std::string cuda_version_text(int64_t since) {
  return "CUDA " + std::to_string(since / 1000) + "." +
         std::to_string(since % 1000 / 10);
}

}  // namespace xal::cuda
