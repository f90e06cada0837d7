// nvml_symbols.h -- the one list of the NVML functions the backend uses
// for sensors and Xid events, as an X-macro of entries X(KIND, name, since):
//   KIND   REQUIRED (without it NVML is not used: no NVML sensors, and the
//          log names the function) or OPTIONAL (that sensor, or Xid
//          watching, is left out);
//   since  the NVML API version that introduced it, as NVML_API_VERSION of
//          nvml.h numbers it (5 for NVML 5.319, ..., 11 for the CUDA 11
//          drivers, 12 for CUDA 12): 11 for nvmlEventSetWait_v2, 9 for
//          nvmlDeviceGetTotalEnergyConsumption (Volta). The others carry
//          5, the oldest NVML the backend can use (the first with
//          nvmlInit_v2, which it requires): they are older, or their first
//          version is not stated in NVIDIA's change log.
// The function types are the declarations of nvml_api.h.
#pragma once

#include <cstdint>
#include <string>

#include "nvml_api.h"

#define XAL_NVML_SYMBOLS(X)                              \
  X(REQUIRED, nvmlInit_v2, 5)                            \
  X(REQUIRED, nvmlShutdown, 5)                           \
  X(REQUIRED, nvmlDeviceGetHandleByPciBusId_v2, 5)       \
  X(OPTIONAL, nvmlDeviceGetHandleByUUID, 5)              \
  X(OPTIONAL, nvmlDeviceGetUtilizationRates, 5)          \
  X(OPTIONAL, nvmlDeviceGetMemoryInfo, 5)                \
  X(OPTIONAL, nvmlDeviceGetTemperature, 5)               \
  X(OPTIONAL, nvmlDeviceGetPowerUsage, 5)                \
  X(OPTIONAL, nvmlDeviceGetTotalEnergyConsumption, 9)    \
  X(OPTIONAL, nvmlDeviceGetClockInfo, 5)                 \
  X(OPTIONAL, nvmlDeviceGetTotalEccErrors, 5)            \
  X(OPTIONAL, nvmlDeviceGetPcieReplayCounter, 5)         \
  X(OPTIONAL, nvmlEventSetCreate, 5)                     \
  X(OPTIONAL, nvmlDeviceRegisterEvents, 5)               \
  X(OPTIONAL, nvmlEventSetWait_v2, 11)                   \
  X(OPTIONAL, nvmlEventSetFree, 5)

namespace xal::cuda {

// "NVML 11" for 11.
inline std::string nvml_version_text(int64_t since) {
  return "NVML " + std::to_string(since);
}

}  // namespace xal::cuda
