// Simulated Level Zero: init, driver, devices, contexts and memory.
#include <cstdio>
#include <cstring>

#include "sim_state.h"

// Lets the backend label itself as running on a simulated driver.
SIM_EXPORT const char* const xal_simulated_driver;
const char* const xal_simulated_driver =
    "xal Level Zero simulator 1.0 (host memory)";

namespace {

template <typename T>
ze_result_t fill_list(uint32_t* count, T* out, const std::vector<T>& items) {
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || out == nullptr) {
    *count = static_cast<uint32_t>(items.size());
    return ZE_RESULT_SUCCESS;
  }
  const uint32_t n = std::min<uint32_t>(*count, static_cast<uint32_t>(items.size()));
  for (uint32_t i = 0; i < n; ++i) out[i] = items[i];
  *count = n;
  return ZE_RESULT_SUCCESS;
}

bool valid_device(xalsim::State& s, ze_device_handle_t device) {
  for (const auto& candidate : s.devices) {
    if (candidate.get() == device) return true;
  }
  return false;
}

}  // namespace

SIM_EXPORT ze_result_t zeInit(ze_init_flags_t flags) {
  xalsim::State& s = xalsim::state();
  std::lock_guard lock(s.mutex);
  xalsim::configure(s);
  s.gpu_only = (flags & ZE_INIT_FLAG_GPU_ONLY) != 0;
  return static_cast<ze_result_t>(s.faults.next("XALSIM_ZE_FAIL", "zeInit"));
}

SIM_EXPORT ze_result_t zeDriverGet(uint32_t* count, ze_driver_handle_t* drivers) {
  SIM_BEGIN("zeDriverGet", false);
  std::vector<ze_driver_handle_t> all;
  if (xalsim::npu_listed(s)) all.push_back(&s.drivers[xalsim::kNpuDriver]);  // first
  for (size_t i = 0; i < s.driver_count; ++i) all.push_back(&s.drivers[i]);
  return fill_list(count, drivers, all);
}

SIM_EXPORT ze_result_t zeDriverGetApiVersion(ze_driver_handle_t, ze_api_version_t* v) {
  SIM_BEGIN("zeDriverGetApiVersion", false);
  if (v == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *v = static_cast<ze_api_version_t>(s.api_version);
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeDriverGetProperties(ze_driver_handle_t,
                                             ze_driver_properties_t* p) {
  SIM_BEGIN("zeDriverGetProperties", false);
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->driverVersion = 10000;
  std::memset(p->uuid.id, 0x5E, sizeof p->uuid.id);
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeDeviceGet(ze_driver_handle_t driver, uint32_t* count,
                                   ze_device_handle_t* devices) {
  SIM_BEGIN("zeDeviceGet", false);
  const int index = xalsim::driver_index(s, driver);
  if (index < 0) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::vector<ze_device_handle_t> roots;
  for (const auto& device : s.devices) {
    if (device->root < 0 && device->driver == index) roots.push_back(device.get());
  }
  return fill_list(count, devices, roots);
}

SIM_EXPORT ze_result_t zeDeviceGetSubDevices(ze_device_handle_t device, uint32_t* count,
                                             ze_device_handle_t* subs) {
  SIM_BEGIN("zeDeviceGetSubDevices", false);
  if (!valid_device(s, device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return fill_list(count, subs, device->subs);
}

SIM_EXPORT ze_result_t zeDeviceGetProperties(ze_device_handle_t device,
                                             ze_device_properties_t* p) {
  SIM_BEGIN("zeDeviceGetProperties", false);
  if (!valid_device(s, device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->type = device->npu ? ZE_DEVICE_TYPE_VPU : ZE_DEVICE_TYPE_GPU;
  p->vendorId = 0x8086;
  p->deviceId = 0x0bd5;
  p->flags = device->root >= 0 ? ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE : 0;
  p->subdeviceId = device->root >= 0 ? static_cast<uint32_t>(device->index) : 0;
  p->coreClockRate = 1600;
  p->maxMemAllocSize = s.max_alloc;
  p->numThreadsPerEU = 8;
  p->physicalEUSimdWidth = 16;
  p->numSlices = 1;
  p->numSubslicesPerSlice = 64;
  p->numEUsPerSubslice = 8;
  // Cycles per second for the 1.2 structure type, else whole ns per tick.
  const double hz = s.timer_hz;
  p->timerResolution = p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2
                           ? static_cast<uint64_t>(hz)
                           : static_cast<uint64_t>(1e9 / hz);
  p->timestampValidBits = 64;
  p->kernelTimestampValidBits = 32;
  for (int i = 0; i < ZE_MAX_DEVICE_UUID_SIZE; ++i) {
    p->uuid.id[i] = static_cast<uint8_t>(0xB0 + i);
  }
  p->uuid.id[ZE_MAX_DEVICE_UUID_SIZE - 1] = static_cast<uint8_t>(device->index);
  std::snprintf(p->name, sizeof p->name,
                device->npu         ? "Intel NPU (simulated %d)"
                : device->root >= 0 ? "Intel Data Center GPU Max 1550 (simulated %d, tile)"
                                    : "Intel Data Center GPU Max 1550 (simulated %d)",
                device->index);
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t device,
                                                   uint32_t* count,
                                                   ze_device_memory_properties_t* p) {
  SIM_BEGIN("zeDeviceGetMemoryProperties", false);
  if (!valid_device(s, device) || count == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (*count == 0 || p == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  *count = 1;
  p->maxClockRate = 3200;
  p->maxBusWidth = 8192;
  p->totalSize = s.memory;
  std::snprintf(p->name, sizeof p->name, "HBM");
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeDeviceGetCommandQueueGroupProperties(
    ze_device_handle_t device, uint32_t* count, ze_command_queue_group_properties_t* p) {
  SIM_BEGIN("zeDeviceGetCommandQueueGroupProperties", false);
  if (!valid_device(s, device) || count == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (*count == 0 || p == nullptr) {
    *count = 2;
    return ZE_RESULT_SUCCESS;
  }
  *count = std::min<uint32_t>(*count, 2);
  p[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
  p[0].numQueues = 1;
  if (*count > 1) {
    p[1].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                 ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    p[1].numQueues = 4;
  }
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeDeviceCanAccessPeer(ze_device_handle_t a, ze_device_handle_t b,
                                             ze_bool_t* value) {
  SIM_BEGIN("zeDeviceCanAccessPeer", false);
  if (!valid_device(s, a) || !valid_device(s, b) || value == nullptr) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  *value = xalsim::env_flag("XALSIM_ZE_NO_PEER") ? 0 : 1;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeDevicePciGetPropertiesExt(ze_device_handle_t device,
                                                   ze_pci_ext_properties_t* p) {
  SIM_BEGIN("zeDevicePciGetPropertiesExt", false);
  if (!valid_device(s, device) || p == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  p->address = {0, static_cast<uint32_t>(0x3a + device->index), 0, 0};
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeContextCreate(ze_driver_handle_t driver, const ze_context_desc_t*,
                                       ze_context_handle_t* context) {
  SIM_BEGIN("zeContextCreate", false);
  const int index = xalsim::driver_index(s, driver);
  if (index < 0 || context == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *context = xalsim::make<_ze_context_handle_t>(s);
  (*context)->driver = index;
  ++s.live_contexts;
  s.lost = false;  // a fresh context after a lost one works again
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeContextDestroy(ze_context_handle_t context) {
  SIM_BEGIN("zeContextDestroy", false);
  if (!xalsim::destroy(s, context)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  --s.live_contexts;
  for (auto it = s.allocations.begin(); it != s.allocations.end();) {
    if (it->second.context == context) {
      if (it->second.device >= 0 && !it->second.ipc) {
        s.used[it->second.device] -= it->second.size;
      }
      it = s.allocations.erase(it);
    } else {
      ++it;
    }
  }
  return ZE_RESULT_SUCCESS;
}

namespace {

ze_result_t allocate(xalsim::State& s, ze_context_handle_t context, size_t size,
                     size_t alignment, int device, ze_memory_type_t type, void** out) {
  if (!xalsim::live(s, context)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
    return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  }
  if (device >= 0 && size > s.memory - s.used[device]) {
    return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  const size_t align = alignment < 256 ? 256 : alignment;
  xalsim::Allocation allocation;
  allocation.data = xalsim::Block::allocate(size, align);
  if (!allocation.data) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  allocation.size = size;
  allocation.device = device;
  allocation.context = context;
  allocation.type = type;
  const auto base = reinterpret_cast<uintptr_t>(allocation.data.data());
  s.allocations.emplace(base, std::move(allocation));
  if (device >= 0) s.used[device] += size;
  *out = reinterpret_cast<void*>(base);
  return ZE_RESULT_SUCCESS;
}

// Whether `desc` chains ze_relaxed_allocation_limits_exp_desc_t with the
// MAX_SIZE flag, which allows more than maxMemAllocSize.
bool relaxed_max_size(const ze_device_mem_alloc_desc_t* desc) {
  const void* next = desc != nullptr ? desc->pNext : nullptr;
  while (next != nullptr) {
    const auto* base = static_cast<const ze_base_desc_t*>(next);
    if (base->stype == ZE_STRUCTURE_TYPE_RELAXED_ALLOCATION_LIMITS_EXP_DESC) {
      const auto* relaxed = static_cast<const ze_relaxed_allocation_limits_exp_desc_t*>(next);
      return (relaxed->flags & ZE_RELAXED_ALLOCATION_LIMITS_EXP_FLAG_MAX_SIZE) != 0;
    }
    next = base->pNext;
  }
  return false;
}

}  // namespace

SIM_EXPORT ze_result_t zeMemAllocDevice(ze_context_handle_t context,
                                        const ze_device_mem_alloc_desc_t* desc, size_t size,
                                        size_t alignment, ze_device_handle_t device,
                                        void** out) {
  SIM_BEGIN("zeMemAllocDevice", true);
  if (!valid_device(s, device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (size > s.max_alloc && !relaxed_max_size(desc)) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  return allocate(s, context, size, alignment, device->index, ZE_MEMORY_TYPE_DEVICE, out);
}

SIM_EXPORT ze_result_t zeMemAllocHost(ze_context_handle_t context,
                                      const ze_host_mem_alloc_desc_t*, size_t size,
                                      size_t alignment, void** out) {
  SIM_BEGIN("zeMemAllocHost", true);
  // The simulated NPU driver has no host USM.
  if (xalsim::live(s, context) && context->driver == xalsim::kNpuDriver) {
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
  }
  return allocate(s, context, size, alignment, -1, ZE_MEMORY_TYPE_HOST, out);
}

SIM_EXPORT ze_result_t zeMemAllocShared(ze_context_handle_t context,
                                        const ze_device_mem_alloc_desc_t*,
                                        const ze_host_mem_alloc_desc_t*, size_t size,
                                        size_t alignment, ze_device_handle_t device,
                                        void** out) {
  SIM_BEGIN("zeMemAllocShared", true);
  const int index = device != nullptr && valid_device(s, device) ? device->index : -1;
  return allocate(s, context, size, alignment, index, ZE_MEMORY_TYPE_SHARED, out);
}

SIM_EXPORT ze_result_t zeMemFree(ze_context_handle_t context, void* pointer) {
  SIM_BEGIN("zeMemFree", false);
  auto found = s.allocations.find(reinterpret_cast<uintptr_t>(pointer));
  // Memory opened from an IPC handle is closed with zeMemCloseIpcHandle.
  if (found == s.allocations.end() || found->second.context != context ||
      found->second.ipc) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  if (found->second.device >= 0) s.used[found->second.device] -= found->second.size;
  s.allocations.erase(found);
  return ZE_RESULT_SUCCESS;
}
