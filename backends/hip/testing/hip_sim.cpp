// A simulated HIP runtime (libamdhip64.so.5) over host memory, for testing
// the HIP backend where no AMD GPU exists. Implements the subset of the
// runtime API the backend uses; see sim_state.h for the model.
#include <cstring>
#include <thread>
#include <vector>

#include "sim_state.h"

using xalsim::State;

// Lets the backend label itself as running on a simulated driver.
SIM_EXPORT const char* const xal_simulated_driver;
const char* const xal_simulated_driver = "xal HIP simulator 1.0 (host memory)";

namespace {

bool valid_device(const State& s, int device) {
  return device >= 0 && device < static_cast<int>(s.devices.size());
}

}  // namespace

SIM_EXPORT hipError_t hipInit(unsigned int flags) {
  State& s = xalsim::state();
  std::lock_guard lock(s.mutex);
  xalsim::configure(s);
  if (int code = s.faults.next("XALSIM_HIP_FAIL", "hipInit"); code != 0) {
    return static_cast<hipError_t>(code);
  }
  return flags == 0 ? hipSuccess : hipErrorInvalidValue;
}

SIM_EXPORT hipError_t hipDriverGetVersion(int* version) {
  if (version == nullptr) return hipErrorInvalidValue;
  *version = 50221153;
  return hipSuccess;
}

SIM_EXPORT hipError_t hipRuntimeGetVersion(int* version) {
  if (version == nullptr) return hipErrorInvalidValue;
  *version = 50221153;
  return hipSuccess;
}

SIM_EXPORT hipError_t hipGetDeviceCount(int* count) {
  SIM_BEGIN("hipGetDeviceCount", false);
  if (count == nullptr) return hipErrorInvalidValue;
  *count = static_cast<int>(s.devices.size());
  return s.devices.empty() ? hipErrorNoDevice : hipSuccess;
}

SIM_EXPORT hipError_t hipSetDevice(int device) {
  SIM_BEGIN("hipSetDevice", false);
  if (!valid_device(s, device)) return hipErrorInvalidDevice;
  xalsim::current_device() = device;
  return hipSuccess;
}

SIM_EXPORT hipError_t hipGetDevice(int* device) {
  SIM_BEGIN("hipGetDevice", false);
  if (device == nullptr) return hipErrorInvalidValue;
  *device = xalsim::current_device();
  return hipSuccess;
}

SIM_EXPORT hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attr,
                                            int device) {
  SIM_BEGIN("hipDeviceGetAttribute", false);
  if (value == nullptr || !valid_device(s, device)) return hipErrorInvalidValue;
  switch (attr) {
    case hipDeviceAttributeMultiprocessorCount: *value = 110; break;
    case hipDeviceAttributeClockRate: *value = 1700000; break;
    case hipDeviceAttributeMemoryClockRate: *value = 1600000; break;
    case hipDeviceAttributeMemoryBusWidth: *value = 8192; break;
    default: *value = 0; break;
  }
  return hipSuccess;
}

SIM_EXPORT hipError_t hipDeviceGetName(char* name, int length, hipDevice_t device) {
  SIM_BEGIN("hipDeviceGetName", false);
  if (name == nullptr || length <= 0 || !valid_device(s, device)) {
    return hipErrorInvalidValue;
  }
  std::snprintf(name, static_cast<size_t>(length),
                "AMD Instinct MI250X (simulated %d)", device);
  return hipSuccess;
}

SIM_EXPORT hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device) {
  SIM_BEGIN("hipDeviceTotalMem", false);
  if (bytes == nullptr || !valid_device(s, device)) return hipErrorInvalidValue;
  *bytes = s.devices[device].total;
  return hipSuccess;
}

SIM_EXPORT hipError_t hipDeviceGetUuid(hipUUID* uuid, hipDevice_t device) {
  SIM_BEGIN("hipDeviceGetUuid", false);
  if (uuid == nullptr || !valid_device(s, device)) return hipErrorInvalidValue;
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(0xA0 + i);
  uuid->bytes[15] = static_cast<char>(device);
  return hipSuccess;
}

SIM_EXPORT hipError_t hipDeviceGetPCIBusId(char* text, int length, int device) {
  SIM_BEGIN("hipDeviceGetPCIBusId", false);
  if (text == nullptr || length <= 0 || !valid_device(s, device)) {
    return hipErrorInvalidValue;
  }
  std::snprintf(text, static_cast<size_t>(length), "0000:%02x:00.0",
                0x10 + device / s.partitions);  // one address per card
  return hipSuccess;
}

SIM_EXPORT const char* hipGetErrorName(hipError_t code) {
  return code == hipSuccess ? "hipSuccess" : "hipError (simulated)";
}

SIM_EXPORT hipError_t hipDeviceSynchronize() {
  SIM_BEGIN("hipDeviceSynchronize", true);
  std::vector<xalsim::Worker*> workers;
  for (const auto& [key, stream] : s.streams) {
    if (stream->device == xalsim::current_device()) workers.push_back(stream->worker.get());
  }
  lock.unlock();
  for (xalsim::Worker* worker : workers) worker->wait_idle();
  return hipSuccess;
}

SIM_EXPORT hipError_t hipDeviceReset() {
  SIM_BEGIN("hipDeviceReset", false);
  const int device = xalsim::current_device();
  if (!valid_device(s, device)) return hipErrorInvalidDevice;
  // Streams finish what they hold before the device's memory goes.
  std::vector<std::unique_ptr<ihipStream_t>> streams;
  for (auto it = s.streams.begin(); it != s.streams.end();) {
    if (it->second->device == device) {
      streams.push_back(std::move(it->second));
      it = s.streams.erase(it);
    } else {
      ++it;
    }
  }
  lock.unlock();
  streams.clear();
  lock.lock();
  std::erase_if(s.allocations,
                [&](const auto& entry) { return entry.second.device == device; });
  std::erase_if(s.events,
                [&](const auto& entry) { return entry.second->device == device; });
  std::erase_if(s.modules,
                [&](const auto& entry) { return entry.second->device == device; });
  s.devices[device].used = 0;
  s.devices[device].sticky = 0;
  s.devices[device].peers.clear();
  return hipSuccess;
}

SIM_EXPORT hipError_t hipMalloc(void** pointer, size_t bytes) {
  SIM_BEGIN("hipMalloc", true);
  if (pointer == nullptr) return hipErrorInvalidValue;
  const int device = xalsim::current_device();
  xalsim::Device& d = s.devices[device];
  if (bytes == 0) {
    *pointer = nullptr;
    return hipSuccess;
  }
  if (bytes > d.total - d.used) return hipErrorOutOfMemory;
  xalsim::Allocation allocation;
  // Page-aligned (the runtime promises 256 bytes), from memory another
  // process can map (hipIpcGetMemHandle).
  allocation.data = xalsim::Block::allocate(bytes, 256);
  if (!allocation.data) return hipErrorOutOfMemory;
  allocation.size = bytes;
  allocation.device = device;
  const auto base = reinterpret_cast<uintptr_t>(allocation.data.data());
  s.allocations.emplace(base, std::move(allocation));
  d.used += bytes;
  *pointer = reinterpret_cast<void*>(base);
  return hipSuccess;
}

SIM_EXPORT hipError_t hipFree(void* pointer) {
  SIM_BEGIN("hipFree", true);
  if (pointer == nullptr) return hipSuccess;
  auto found = s.allocations.find(reinterpret_cast<uintptr_t>(pointer));
  // Memory opened from an IPC handle is closed with hipIpcCloseMemHandle.
  if (found == s.allocations.end() || found->second.ipc) return hipErrorInvalidValue;
  s.devices[found->second.device].used -= found->second.size;
  s.allocations.erase(found);
  return hipSuccess;
}

SIM_EXPORT hipError_t hipMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  SIM_BEGIN("hipMemGetInfo", true);
  if (free_bytes == nullptr || total_bytes == nullptr) return hipErrorInvalidValue;
  const xalsim::Device& d = s.devices[xalsim::current_device()];
  *free_bytes = d.total - d.used;
  *total_bytes = d.total;
  return hipSuccess;
}

SIM_EXPORT hipError_t hipHostMalloc(void** pointer, size_t bytes, unsigned int) {
  SIM_BEGIN("hipHostMalloc", false);
  if (pointer == nullptr || bytes == 0) return hipErrorInvalidValue;
  auto data = std::make_unique<std::byte[]>(bytes);
  *pointer = data.get();
  s.host_allocations.emplace(data.get(), std::move(data));
  return hipSuccess;
}

SIM_EXPORT hipError_t hipHostFree(void* pointer) {
  SIM_BEGIN("hipHostFree", false);
  if (pointer == nullptr) return hipSuccess;
  return s.host_allocations.erase(pointer) == 1 ? hipSuccess
                                                : hipErrorInvalidValue;
}

SIM_EXPORT hipError_t hipHostRegister(void* pointer, size_t bytes, unsigned int) {
  SIM_BEGIN("hipHostRegister", false);
  if (pointer == nullptr || bytes == 0) return hipErrorInvalidValue;
  return s.registered.insert(pointer).second
             ? hipSuccess
             : hipErrorHostMemoryAlreadyRegistered;
}

SIM_EXPORT hipError_t hipHostUnregister(void* pointer) {
  SIM_BEGIN("hipHostUnregister", false);
  return s.registered.erase(pointer) == 1 ? hipSuccess
                                          : hipErrorHostMemoryNotRegistered;
}
