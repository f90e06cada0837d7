// The one list of every HIP runtime function the backend uses, as an
// X-macro of entries X(KIND, name, since):
//   KIND   REQUIRED (the backend is UNAVAILABLE without it; the reason names
//          it and the version needed) or OPTIONAL (a feature is reported
//          NOT_SUPPORTED when the runtime lacks it);
//   since  the first HIP version providing it, as HIP_VERSION encodes it
//          (major * 10000000 + minor * 100000 + patch): 50600000 is HIP 5.6.
//          hipStreamGetDevice came with HIP 5.6 (declared in hip_api.h: the
//          5.2 header lacks it). The others are older than the oldest
//          runtime the backend opens (libamdhip64.so.4) or their first
//          version is not stated in AMD's notes; they carry that oldest
//          version, 40000000 (HIP 4.0).
// The function types are the declarations of hip_api.h (decltype(&name)).
#pragma once

#include <cstdint>
#include <string>

#include "hip_api.h"

#define XAL_HIP_SYMBOLS(X) \
  /* Runtime and devices */                                          \
  X(REQUIRED, hipInit, 40000000)                                     \
  X(REQUIRED, hipDriverGetVersion, 40000000)                         \
  X(REQUIRED, hipRuntimeGetVersion, 40000000)                        \
  X(REQUIRED, hipGetDeviceCount, 40000000)                           \
  X(REQUIRED, hipSetDevice, 40000000)                                \
  X(OPTIONAL, hipGetDevice, 40000000)                                \
  X(REQUIRED, hipDeviceGetAttribute, 40000000)                       \
  X(REQUIRED, hipDeviceGetName, 40000000)                            \
  X(REQUIRED, hipDeviceTotalMem, 40000000)                           \
  X(REQUIRED, hipDeviceSynchronize, 40000000)                        \
  X(REQUIRED, hipDeviceReset, 40000000)                              \
  X(OPTIONAL, hipDeviceGetUuid, 40000000)                            \
  X(OPTIONAL, hipDeviceGetPCIBusId, 40000000)                        \
  X(OPTIONAL, hipGetErrorName, 40000000)                             \
  X(OPTIONAL, hipGetErrorString, 40000000)                           \
  /* Memory */                                                       \
  X(REQUIRED, hipMalloc, 40000000)                                   \
  X(REQUIRED, hipFree, 40000000)                                     \
  X(REQUIRED, hipMemGetInfo, 40000000)                               \
  X(OPTIONAL, hipHostMalloc, 40000000)                               \
  X(OPTIONAL, hipHostFree, 40000000)                                 \
  X(OPTIONAL, hipHostRegister, 40000000)                             \
  X(OPTIONAL, hipHostUnregister, 40000000)                           \
  /* Interop (ABI 1.1): imported memory and streams, IPC handles */  \
  X(OPTIONAL, hipPointerGetAttributes, 40000000)                     \
  X(OPTIONAL, hipMemGetAddressRange, 40000000)                       \
  X(OPTIONAL, hipStreamGetFlags, 40000000)                           \
  X(OPTIONAL, hipStreamGetDevice, 50600000)                          \
  X(OPTIONAL, hipIpcGetMemHandle, 40000000)                          \
  X(OPTIONAL, hipIpcOpenMemHandle, 40000000)                         \
  X(OPTIONAL, hipIpcCloseMemHandle, 40000000)                        \
  /* Streams and events */                                           \
  X(REQUIRED, hipStreamCreateWithFlags, 40000000)                    \
  X(REQUIRED, hipStreamDestroy, 40000000)                            \
  X(REQUIRED, hipStreamSynchronize, 40000000)                        \
  X(REQUIRED, hipStreamQuery, 40000000)                              \
  X(REQUIRED, hipStreamWaitEvent, 40000000)                          \
  X(OPTIONAL, hipLaunchHostFunc, 40000000)                           \
  X(REQUIRED, hipEventCreateWithFlags, 40000000)                     \
  X(REQUIRED, hipEventDestroy, 40000000)                             \
  X(REQUIRED, hipEventRecord, 40000000)                              \
  X(REQUIRED, hipEventSynchronize, 40000000)                         \
  X(REQUIRED, hipEventQuery, 40000000)                               \
  X(REQUIRED, hipEventElapsedTime, 40000000)                         \
  /* Copies and memset */                                            \
  X(REQUIRED, hipMemcpyHtoDAsync, 40000000)                          \
  X(REQUIRED, hipMemcpyDtoHAsync, 40000000)                          \
  X(REQUIRED, hipMemcpyDtoDAsync, 40000000)                          \
  X(REQUIRED, hipMemsetD8Async, 40000000)                            \
  X(OPTIONAL, hipDeviceCanAccessPeer, 40000000)                      \
  X(OPTIONAL, hipDeviceEnablePeerAccess, 40000000)                   \
  X(OPTIONAL, hipMemcpyPeerAsync, 40000000)                          \
  /* Code objects */                                                 \
  X(OPTIONAL, hipModuleLoadData, 40000000)                           \
  X(OPTIONAL, hipModuleUnload, 40000000)                             \
  X(OPTIONAL, hipModuleGetFunction, 40000000)                        \
  X(OPTIONAL, hipModuleLaunchKernel, 40000000)

namespace xal::hip {

// "HIP 5.6" for 50600000.
inline std::string hip_version_text(int64_t since) {
  return "HIP " + std::to_string(since / 10000000) + "." +
         std::to_string(since / 100000 % 100);
}

}  // namespace xal::hip
