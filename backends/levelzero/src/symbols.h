// The one list of every Level Zero (and Sysman) function the backend uses,
// as an X-macro of entries X(KIND, name, since):
//   KIND   REQUIRED (the backend is UNAVAILABLE without it; the reason names
//          it) or OPTIONAL (the feature it serves reports NOT_SUPPORTED, or,
//          for Sysman, the metric is left out, when the loader lacks it);
//   since  the Level Zero API version that introduced the function, as
//          ZE_MAKE_VERSION(major, minor) encodes it ((major << 16) | minor),
//          from the "Added in version" notes of the Level Zero
//          specification: 1.0 for the core and Sysman functions of the first
//          release, 1.3 for the PCI properties extension, 1.9 for the
//          command-list queries (declared in ze_api.h: the 1.4 headers lack
//          them; without them no list is imported, as a handle could not be
//          checked).
// The function types are the declarations of ze_api.h (decltype(&name)).
#pragma once

#include <cstdint>
#include <string>

#include "ze_api.h"

#define XAL_ZE_SYMBOLS(X) \
  /* Drivers and devices */                                                         \
  X(REQUIRED, zeInit, ZE_MAKE_VERSION(1, 0))                                        \
  X(REQUIRED, zeDriverGet, ZE_MAKE_VERSION(1, 0))                                   \
  X(REQUIRED, zeDriverGetApiVersion, ZE_MAKE_VERSION(1, 0))                         \
  X(REQUIRED, zeDriverGetProperties, ZE_MAKE_VERSION(1, 0))                         \
  X(REQUIRED, zeDeviceGet, ZE_MAKE_VERSION(1, 0))                                   \
  X(REQUIRED, zeDeviceGetSubDevices, ZE_MAKE_VERSION(1, 0))                         \
  X(REQUIRED, zeDeviceGetProperties, ZE_MAKE_VERSION(1, 0))                         \
  X(REQUIRED, zeDeviceGetMemoryProperties, ZE_MAKE_VERSION(1, 0))                   \
  X(REQUIRED, zeDeviceGetCommandQueueGroupProperties, ZE_MAKE_VERSION(1, 0))        \
  X(OPTIONAL, zeDeviceCanAccessPeer, ZE_MAKE_VERSION(1, 0))                         \
  X(OPTIONAL, zeDevicePciGetPropertiesExt, ZE_MAKE_VERSION(1, 3))                   \
  /* Contexts, immediate command lists (streams), events */                         \
  X(REQUIRED, zeContextCreate, ZE_MAKE_VERSION(1, 0))                               \
  X(REQUIRED, zeContextDestroy, ZE_MAKE_VERSION(1, 0))                              \
  X(REQUIRED, zeCommandListCreateImmediate, ZE_MAKE_VERSION(1, 0))                  \
  X(REQUIRED, zeCommandListDestroy, ZE_MAKE_VERSION(1, 0))                          \
  X(REQUIRED, zeCommandListAppendBarrier, ZE_MAKE_VERSION(1, 0))                    \
  X(REQUIRED, zeCommandListAppendWaitOnEvents, ZE_MAKE_VERSION(1, 0))               \
  X(REQUIRED, zeEventPoolCreate, ZE_MAKE_VERSION(1, 0))                             \
  X(REQUIRED, zeEventPoolDestroy, ZE_MAKE_VERSION(1, 0))                            \
  X(REQUIRED, zeEventCreate, ZE_MAKE_VERSION(1, 0))                                 \
  X(REQUIRED, zeEventDestroy, ZE_MAKE_VERSION(1, 0))                                \
  X(REQUIRED, zeEventHostSynchronize, ZE_MAKE_VERSION(1, 0))                        \
  X(REQUIRED, zeEventQueryStatus, ZE_MAKE_VERSION(1, 0))                            \
  X(REQUIRED, zeEventHostReset, ZE_MAKE_VERSION(1, 0))                              \
  X(REQUIRED, zeEventQueryKernelTimestamp, ZE_MAKE_VERSION(1, 0))                   \
  /* Memory, copies, fill */                                                        \
  X(REQUIRED, zeMemAllocDevice, ZE_MAKE_VERSION(1, 0))                              \
  X(REQUIRED, zeMemAllocHost, ZE_MAKE_VERSION(1, 0))                                \
  X(OPTIONAL, zeMemAllocShared, ZE_MAKE_VERSION(1, 0))                              \
  X(REQUIRED, zeMemFree, ZE_MAKE_VERSION(1, 0))                                     \
  X(REQUIRED, zeCommandListAppendMemoryCopy, ZE_MAKE_VERSION(1, 0))                 \
  X(REQUIRED, zeCommandListAppendMemoryFill, ZE_MAKE_VERSION(1, 0))                 \
  /* Interop (ABI 1.1): imported USM and immediate command lists, IPC handles */    \
  X(OPTIONAL, zeMemGetAllocProperties, ZE_MAKE_VERSION(1, 0))                       \
  X(OPTIONAL, zeMemGetAddressRange, ZE_MAKE_VERSION(1, 0))                          \
  X(OPTIONAL, zeMemGetIpcHandle, ZE_MAKE_VERSION(1, 0))                             \
  X(OPTIONAL, zeMemOpenIpcHandle, ZE_MAKE_VERSION(1, 0))                            \
  X(OPTIONAL, zeMemCloseIpcHandle, ZE_MAKE_VERSION(1, 0))                           \
  X(OPTIONAL, zeCommandListGetDeviceHandle, ZE_MAKE_VERSION(1, 9))                  \
  X(OPTIONAL, zeCommandListGetContextHandle, ZE_MAKE_VERSION(1, 9))                 \
  X(OPTIONAL, zeCommandListIsImmediate, ZE_MAKE_VERSION(1, 9))                      \
  /* Modules (SPIR-V) and kernels */                                                \
  X(OPTIONAL, zeModuleCreate, ZE_MAKE_VERSION(1, 0))                                \
  X(OPTIONAL, zeModuleDestroy, ZE_MAKE_VERSION(1, 0))                               \
  X(OPTIONAL, zeModuleBuildLogGetString, ZE_MAKE_VERSION(1, 0))                     \
  X(OPTIONAL, zeModuleBuildLogDestroy, ZE_MAKE_VERSION(1, 0))                       \
  X(OPTIONAL, zeKernelCreate, ZE_MAKE_VERSION(1, 0))                                \
  X(OPTIONAL, zeKernelDestroy, ZE_MAKE_VERSION(1, 0))                               \
  X(OPTIONAL, zeKernelSetGroupSize, ZE_MAKE_VERSION(1, 0))                          \
  X(OPTIONAL, zeKernelSetArgumentValue, ZE_MAKE_VERSION(1, 0))                      \
  X(OPTIONAL, zeCommandListAppendLaunchKernel, ZE_MAKE_VERSION(1, 0))               \
  /* Sysman (device handles double as Sysman handles under ZES_ENABLE_SYSMAN=1) */  \
  X(OPTIONAL, zesDeviceGetState, ZE_MAKE_VERSION(1, 0))                             \
  X(OPTIONAL, zesDeviceEnumMemoryModules, ZE_MAKE_VERSION(1, 0))                    \
  X(OPTIONAL, zesMemoryGetState, ZE_MAKE_VERSION(1, 0))                             \
  X(OPTIONAL, zesDeviceEnumPowerDomains, ZE_MAKE_VERSION(1, 0))                     \
  X(OPTIONAL, zesPowerGetEnergyCounter, ZE_MAKE_VERSION(1, 0))                      \
  X(OPTIONAL, zesDeviceEnumTemperatureSensors, ZE_MAKE_VERSION(1, 0))               \
  X(OPTIONAL, zesTemperatureGetState, ZE_MAKE_VERSION(1, 0))                        \
  X(OPTIONAL, zesDeviceEnumEngineGroups, ZE_MAKE_VERSION(1, 0))                     \
  X(OPTIONAL, zesEngineGetProperties, ZE_MAKE_VERSION(1, 0))                        \
  X(OPTIONAL, zesEngineGetActivity, ZE_MAKE_VERSION(1, 0))                          \
  X(OPTIONAL, zesDeviceEnumRasErrorSets, ZE_MAKE_VERSION(1, 0))                     \
  X(OPTIONAL, zesRasGetProperties, ZE_MAKE_VERSION(1, 0))                           \
  X(OPTIONAL, zesRasGetState, ZE_MAKE_VERSION(1, 0))                                \
  X(OPTIONAL, zesDeviceEnumFrequencyDomains, ZE_MAKE_VERSION(1, 0))                 \
  X(OPTIONAL, zesFrequencyGetProperties, ZE_MAKE_VERSION(1, 0))                     \
  X(OPTIONAL, zesFrequencyGetState, ZE_MAKE_VERSION(1, 0))

namespace xal::levelzero {

// Level Zero's first release: a function of it is in every loader, and
// the reason for its absence names no version.
constexpr int64_t kZeFirstRelease = ZE_MAKE_VERSION(1, 0);

// "Level Zero 1.9" for ZE_MAKE_VERSION(1, 9).
inline std::string ze_version_text(int64_t since) {
  return "Level Zero " + std::to_string(ZE_MAJOR_VERSION(since)) + "." +
         std::to_string(ZE_MINOR_VERSION(since));
}

}  // namespace xal::levelzero
