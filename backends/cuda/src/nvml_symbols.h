// nvml_symbols.h -- the NVML functions the backend uses, opened with dlopen
// from libnvidia-ml.so.1. NVML's header is not part of the CUDA toolkit
// image we build with, so the few types needed are declared here with the
// layout of nvml.h (stable since NVML 3).
#pragma once

#include <cstdint>

namespace xal::cuda::nvml {

using Return = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using Device = struct DeviceOpaque*;
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
using EventSet = struct EventSetOpaque*;  // nvmlEventSet_t
// nvmlEventData_t as nvmlEventSetWait_v2 fills it (NVML 11 and newer).
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;  // the Xid, for kEventXidCriticalError
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
constexpr unsigned long long kEventXidCriticalError = 0x8;  // nvmlEventTypeXidCriticalError
constexpr int kTemperatureGpu = 0;       // NVML_TEMPERATURE_GPU
constexpr int kClockSm = 1;              // NVML_CLOCK_SM
constexpr int kClockMem = 2;             // NVML_CLOCK_MEM
constexpr int kEccCorrected = 0;         // NVML_MEMORY_ERROR_TYPE_CORRECTED
constexpr int kEccUncorrected = 1;       // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kEccAggregate = 1;         // NVML_AGGREGATE_ECC

}  // namespace xal::cuda::nvml

// X(KIND, symbol, return, parameters)
#define XAL_NVML_SYMBOLS(X)                                                   \
  X(REQUIRED, nvmlInit_v2, Return, (void))                                     \
  X(REQUIRED, nvmlShutdown, Return, (void))                                    \
  X(REQUIRED, nvmlDeviceGetHandleByPciBusId_v2, Return,                        \
    (const char*, Device*))                                                    \
  X(OPTIONAL, nvmlDeviceGetHandleByUUID, Return, (const char*, Device*))       \
  X(OPTIONAL, nvmlDeviceGetUtilizationRates, Return, (Device, Utilization*))   \
  X(OPTIONAL, nvmlDeviceGetMemoryInfo, Return, (Device, Memory*))              \
  X(OPTIONAL, nvmlDeviceGetTemperature, Return, (Device, int, unsigned int*))  \
  X(OPTIONAL, nvmlDeviceGetPowerUsage, Return, (Device, unsigned int*))        \
  X(OPTIONAL, nvmlDeviceGetTotalEnergyConsumption, Return,                     \
    (Device, unsigned long long*))                                             \
  X(OPTIONAL, nvmlDeviceGetClockInfo, Return, (Device, int, unsigned int*))    \
  X(OPTIONAL, nvmlDeviceGetTotalEccErrors, Return,                             \
    (Device, int, int, unsigned long long*))                                   \
  X(OPTIONAL, nvmlDeviceGetPcieReplayCounter, Return, (Device, unsigned int*)) \
  X(OPTIONAL, nvmlEventSetCreate, Return, (EventSet*))                         \
  X(OPTIONAL, nvmlDeviceRegisterEvents, Return,                                \
    (Device, unsigned long long, EventSet))                                    \
  X(OPTIONAL, nvmlEventSetWait_v2, Return, (EventSet, EventData*, unsigned int)) \
  X(OPTIONAL, nvmlEventSetFree, Return, (EventSet))
