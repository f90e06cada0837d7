// nvml_api.h -- the NVML types and functions the backend uses, with the
// layout of nvml.h (not part of the CUDA toolkit image we build with;
// stable since NVML 3). The prototypes only give the function types of the
// symbol list (decltype(&name)): the backend never links NVML and never
// calls them directly; nvml_symbols.h lists them and metrics.cpp opens
// libnvidia-ml.so.1 with dlopen.
#pragma once

#include <cstdint>

extern "C" {
// nvmlReturn_t is an enum of nvml.h; 0 is NVML_SUCCESS.
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;
typedef struct nvmlUtilization_st {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;
typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;
// As nvmlEventSetWait_v2 fills it (NVML 11 and newer).
typedef struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the Xid, for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

// The enum parameters of nvml.h (nvmlTemperatureSensors_t, nvmlClockType_t,
// nvmlMemoryErrorType_t, nvmlEccCounterType_t) are passed as int.
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId,
                                              nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                           nvmlUtilization_t* utilization);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensorType,
                                      unsigned int* temp);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                 unsigned long long* energy);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type,
                                    unsigned int* clock);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType,
                                         int counterType,
                                         unsigned long long* eccCounts);
nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device,
                                            unsigned int* value);
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device,
                                      unsigned long long eventTypes,
                                      nvmlEventSet_t set);
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                 unsigned int timeoutms);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);
}

namespace xal::cuda::nvml {

using Return = nvmlReturn_t;
using Device = nvmlDevice_t;
using Utilization = nvmlUtilization_t;
using Memory = nvmlMemory_t;
using EventSet = nvmlEventSet_t;
using EventData = nvmlEventData_t;
constexpr unsigned long long kEventXidCriticalError = 0x8;  // nvmlEventTypeXidCriticalError
constexpr int kTemperatureGpu = 0;       // NVML_TEMPERATURE_GPU
constexpr int kClockSm = 1;              // NVML_CLOCK_SM
constexpr int kClockMem = 2;             // NVML_CLOCK_MEM
constexpr int kEccCorrected = 0;         // NVML_MEMORY_ERROR_TYPE_CORRECTED
constexpr int kEccUncorrected = 1;       // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kEccAggregate = 1;         // NVML_AGGREGATE_ECC

}  // namespace xal::cuda::nvml
