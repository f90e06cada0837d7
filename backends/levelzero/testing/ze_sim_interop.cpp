// Simulated Level Zero interop: USM pointer queries, command-list queries
// (Level Zero 1.9: the 1.4 headers lack them; defined against the backend's
// declarations in src/ze_api.h, so that the compiler checks their
// signatures), a regular command list to be told from an immediate one,
// and IPC handles.
//
// Like Intel's driver, the simulator finds an allocation of any context of
// the same driver (zeMemGetAllocProperties, copies). An IPC handle names a
// block of the exporter's shareable memory (xalsim/shared_memory.h) by
// process, file descriptor and offset, and the importer maps it through
// /proc/<pid>/fd/<fd>. A real driver's handle carries a file descriptor
// valid only in the exporting process (see the README).
#include <unistd.h>

#include <cstring>

#include "sim_state.h"
#include "ze_api.h"

namespace {

// The simulator's IPC handle, inside ze_ipc_mem_handle_t's 64 bytes.
struct IpcHandle {
  char magic[8];  // "xalsimZ"
  xalsim::SharedRange range;
  int32_t device;
};
static_assert(sizeof(IpcHandle) <= ZE_MAX_IPC_HANDLE_SIZE);
constexpr char kIpcMagic[8] = "xalsimZ";

// The allocation holding `pointer` made in a context of `context`'s driver.
xalsim::Allocation* find_in_driver(xalsim::State& s, ze_context_handle_t context,
                                   const void* pointer, uintptr_t* base) {
  xalsim::Allocation* a = xalsim::find(s, pointer, base);
  if (a == nullptr || !xalsim::live(s, a->context)) return nullptr;
  return a->context->driver == context->driver ? a : nullptr;
}

ze_device_handle_t device_handle(xalsim::State& s, int index) {
  if (index < 0 || index >= static_cast<int>(s.devices.size())) return nullptr;
  return s.devices[static_cast<size_t>(index)].get();
}

}  // namespace

SIM_EXPORT ze_result_t zeMemGetAllocProperties(ze_context_handle_t context, const void* pointer,
                                               ze_memory_allocation_properties_t* properties,
                                               ze_device_handle_t* device) {
  SIM_BEGIN("zeMemGetAllocProperties", false);
  if (!xalsim::live(s, context)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pointer == nullptr || properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  uintptr_t base = 0;
  const xalsim::Allocation* a = find_in_driver(s, context, pointer, &base);
  properties->type = a != nullptr ? a->type : ZE_MEMORY_TYPE_UNKNOWN;
  properties->id = a != nullptr ? base : 0;
  properties->pageSize = a != nullptr ? 4096 : 0;
  if (device != nullptr) *device = a != nullptr ? device_handle(s, a->device) : nullptr;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeMemGetAddressRange(ze_context_handle_t context, const void* pointer,
                                            void** base_out, size_t* size) {
  SIM_BEGIN("zeMemGetAddressRange", false);
  if (!xalsim::live(s, context)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  uintptr_t base = 0;
  const xalsim::Allocation* a = find_in_driver(s, context, pointer, &base);
  if (a == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (base_out != nullptr) *base_out = reinterpret_cast<void*>(base);
  if (size != nullptr) *size = a->size;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeMemGetIpcHandle(ze_context_handle_t context, const void* pointer,
                                         ze_ipc_mem_handle_t* handle) {
  SIM_BEGIN("zeMemGetIpcHandle", true);
  if (!xalsim::live(s, context)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pointer == nullptr || handle == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  uintptr_t base = 0;
  const xalsim::Allocation* a = find_in_driver(s, context, pointer, &base);
  if (a == nullptr || a->ipc || a->type != ZE_MEMORY_TYPE_DEVICE) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  const std::optional<xalsim::SharedRange> range = a->data.share();
  if (!range) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;  // no memfd on this host
  IpcHandle h{};
  std::memcpy(h.magic, kIpcMagic, sizeof h.magic);
  h.range = *range;
  h.device = a->device;
  std::memset(handle, 0, sizeof *handle);
  std::memcpy(handle->data, &h, sizeof h);
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeMemOpenIpcHandle(ze_context_handle_t context,
                                          ze_device_handle_t device,
                                          ze_ipc_mem_handle_t handle,
                                          ze_ipc_memory_flags_t flags, void** pointer) {
  SIM_BEGIN("zeMemOpenIpcHandle", true);
  if (!xalsim::live(s, context) || device == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pointer == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if ((flags & ~ze_ipc_memory_flags_t{3}) != 0) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  IpcHandle h{};
  std::memcpy(&h, handle.data, sizeof h);
  if (std::memcmp(h.magic, kIpcMagic, sizeof h.magic) != 0 || h.range.bytes == 0 ||
      h.range.pid == static_cast<int32_t>(getpid())) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  std::string error;
  xalsim::Block block = xalsim::Block::open(h.range, &error);
  if (!block) return ZE_RESULT_ERROR_NOT_AVAILABLE;
  xalsim::Allocation allocation;
  allocation.data = std::move(block);
  allocation.size = h.range.bytes;
  allocation.device = device->index;
  allocation.context = context;
  allocation.type = ZE_MEMORY_TYPE_DEVICE;
  allocation.ipc = true;
  void* mapped = allocation.data.data();
  s.allocations.emplace(reinterpret_cast<uintptr_t>(mapped), std::move(allocation));
  *pointer = mapped;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeMemCloseIpcHandle(ze_context_handle_t context, const void* pointer) {
  SIM_BEGIN("zeMemCloseIpcHandle", true);
  auto found = s.allocations.find(reinterpret_cast<uintptr_t>(pointer));
  if (found == s.allocations.end() || !found->second.ipc || found->second.context != context) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  s.allocations.erase(found);  // unmaps
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeCommandListCreate(ze_context_handle_t context,
                                           ze_device_handle_t device,
                                           const ze_command_list_desc_t* desc,
                                           ze_command_list_handle_t* out) {
  SIM_BEGIN("zeCommandListCreate", true);
  if (!xalsim::live(s, context) || device == nullptr || desc == nullptr || out == nullptr) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  auto* list = xalsim::make<_ze_command_list_handle_t>(s);
  ++s.live_lists;
  list->device = device;
  list->context = context;
  list->immediate = false;
  *out = list;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeCommandListGetDeviceHandle(ze_command_list_handle_t list,
                                                    ze_device_handle_t* device) {
  SIM_BEGIN("zeCommandListGetDeviceHandle", false);
  if (!xalsim::live(s, list)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (device == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *device = list->device;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeCommandListGetContextHandle(ze_command_list_handle_t list,
                                                     ze_context_handle_t* context) {
  SIM_BEGIN("zeCommandListGetContextHandle", false);
  if (!xalsim::live(s, list)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *context = list->context;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeCommandListIsImmediate(ze_command_list_handle_t list,
                                                ze_bool_t* immediate) {
  SIM_BEGIN("zeCommandListIsImmediate", false);
  if (!xalsim::live(s, list)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (immediate == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *immediate = list->immediate ? 1 : 0;
  return ZE_RESULT_SUCCESS;
}
