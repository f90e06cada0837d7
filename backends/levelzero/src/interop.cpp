// ABI 1.1 interop: USM and immediate command lists the caller made through
// Level Zero, which xal uses but never frees or destroys, and IPC handles
// (zeMemGetIpcHandle, zeMemOpenIpcHandle, zeMemCloseIpcHandle).
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "entries.h"
#include "xal_common/strings.hpp"
#include "errors.h"
#include "status_map.h"
#include "xalsupport/interop_entries.h"

namespace xal::levelzero {
namespace {

static_assert(sizeof(ze_ipc_mem_handle_t) <= XAL_IPC_VENDOR_BYTES);

using common::hex;

std::string device_text(const xal_bdevice_s* device) {
  return "Level Zero device " + std::to_string(device->index);
}

// INVALID_ARGUMENT for a native object that is not the device's: with the
// Level Zero code when the driver refused it (DEVICE_LOST still marks the
// devices, through check()).
xal_status_t refuse(xal_bdevice_s* device, ze_result_t code, const std::string& message) {
  if (code == ZE_RESULT_SUCCESS) return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr, message);
  const StatusMapping mapping = map_status(static_cast<int64_t>(code));
  if (mapping.sticky) return check(device, code, message.c_str());
  char text[32];
  std::snprintf(text, sizeof text, " (%s 0x%x)", mapping.name, static_cast<unsigned>(code));
  return report(XAL_ERROR_INVALID_ARGUMENT, static_cast<int64_t>(code), mapping.name,
                message + text);
}

xal_status_t lacks(const char* function) {
  return support::report_lacks("the Level Zero loader", function);
}

const char* type_name(ze_memory_type_t type) {
  switch (type) {
    case ZE_MEMORY_TYPE_HOST: return "host USM";
    case ZE_MEMORY_TYPE_DEVICE: return "device USM";
    case ZE_MEMORY_TYPE_SHARED: return "shared USM";
    default: return "not USM of this driver";
  }
}

}  // namespace

xal_status_t mem_import(xal_bdevice_t* device, uint64_t native, size_t bytes,
                        uint32_t flags, xal_devptr_t* out_ptr) {
  return guarded("levelzero mem_import", [&]() -> xal_status_t {
    const ZeApi& api = device->backend->api();
    if ((flags & XAL_MEM_IMPORT_HOST) != 0) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "mem_import: Level Zero devices import device or shared USM only; "
                    "register host memory with xal_host_register");
    }
    if (api.zeMemGetAllocProperties == nullptr) return lacks("zeMemGetAllocProperties");
    if (api.zeMemGetAddressRange == nullptr) return lacks("zeMemGetAddressRange");
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    ze_context_handle_t context = device->context();
    const void* pointer = reinterpret_cast<const void*>(native);
    const std::string what = "mem_import: " + hex(native);
    ze_memory_allocation_properties_t properties{ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
    ze_device_handle_t owner = nullptr;
    if (ze_result_t r = api.zeMemGetAllocProperties(context, pointer, &properties, &owner);
        r != ZE_RESULT_SUCCESS) {
      return refuse(device, r, what + " cannot be queried");
    }
    if (properties.type != ZE_MEMORY_TYPE_DEVICE && properties.type != ZE_MEMORY_TYPE_SHARED) {
      return refuse(device, ZE_RESULT_SUCCESS,
                    what + " is " + type_name(properties.type) + ", not device or shared USM of " +
                        device_text(device));
    }
    if (owner != device->handle) {
      return refuse(device, ZE_RESULT_SUCCESS,
                    what + " is " + type_name(properties.type) + " of another device, not of " +
                        device_text(device));
    }
    void* base = nullptr;
    size_t size = 0;
    if (ze_result_t r = api.zeMemGetAddressRange(context, pointer, &base, &size);
        r != ZE_RESULT_SUCCESS) {
      return refuse(device, r, what + " is not inside an allocation");
    }
    return support::accept_import(native, bytes, reinterpret_cast<uint64_t>(base), size, what,
                                  out_ptr);
  });
}

xal_status_t mem_import_release(xal_bdevice_t*, xal_devptr_t) {
  return XAL_SUCCESS;  // the memory stays the caller's
}

xal_status_t stream_import(xal_bdevice_t* device, uint64_t native, uint32_t /*flags*/,
                           xal_bstream_t** out_stream) {
  return guarded("levelzero stream_import", [&]() -> xal_status_t {
    const ZeApi& api = device->backend->api();
    if (api.zeCommandListIsImmediate == nullptr || api.zeCommandListGetDeviceHandle == nullptr ||
        api.zeCommandListGetContextHandle == nullptr) {
      return lacks("zeCommandListIsImmediate (Level Zero 1.9), needed to check a list");
    }
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    auto list = reinterpret_cast<ze_command_list_handle_t>(native);
    const std::string what = "stream_import: " + hex(native);
    ze_bool_t immediate = 0;
    if (ze_result_t r = api.zeCommandListIsImmediate(list, &immediate); r != ZE_RESULT_SUCCESS) {
      return refuse(device, r, what + " is not a live command list");
    }
    if (immediate == 0) {
      return refuse(device, ZE_RESULT_SUCCESS,
                    what + " is a regular command list: only immediate lists are streams");
    }
    ze_device_handle_t owner = nullptr;
    ze_context_handle_t context = nullptr;
    if (ze_result_t r = api.zeCommandListGetDeviceHandle(list, &owner); r != ZE_RESULT_SUCCESS) {
      return refuse(device, r, what + " is not a live command list");
    }
    if (owner != device->handle) {
      return refuse(device, ZE_RESULT_SUCCESS,
                    what + " is a list of another device, not of " + device_text(device));
    }
    if (ze_result_t r = api.zeCommandListGetContextHandle(list, &context);
        r != ZE_RESULT_SUCCESS) {
      return refuse(device, r, what + " is not a live command list");
    }
    auto stream = std::make_shared<xal_bstream_s>();
    stream->device = device;
    stream->list = list;
    stream->imported = true;
    // Whether the list runs in order is unknown: barriers order xal's work.
    stream->explicit_order = true;
    // The fence event lives in the list's own context.
    ze_event_pool_desc_t pool_desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                   ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_device_handle_t handle = device->handle;
    xal_status_t s = check(device, api.zeEventPoolCreate(context, &pool_desc, 1, &handle,
                                                         &stream->pool),
                           "zeEventPoolCreate");
    if (s == XAL_SUCCESS) {
      ze_event_desc_t event_desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0,
                                 ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
      s = check(device, api.zeEventCreate(stream->pool, &event_desc, &stream->sync_event),
                "zeEventCreate");
      if (s != XAL_SUCCESS) (void)api.zeEventPoolDestroy(stream->pool);
    }
    if (s != XAL_SUCCESS) return s;
    std::lock_guard lock(device->mutex);
    stream->generation = device->generation;
    *out_stream = stream.get();
    device->streams.emplace(stream.get(), std::move(stream));
    return XAL_SUCCESS;
  });
}

xal_status_t mem_ipc_get(xal_bdevice_t* device, xal_devptr_t ptr, size_t /*bytes*/,
                         uint8_t* out_vendor) {
  return guarded("levelzero mem_ipc_get", [&]() -> xal_status_t {
    const ZeApi& api = device->backend->api();
    if (api.zeMemGetIpcHandle == nullptr) return lacks("zeMemGetIpcHandle");
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    ze_ipc_mem_handle_t handle{};
    if (xal_status_t s = check(device,
                               api.zeMemGetIpcHandle(device->context(),
                                                     reinterpret_cast<const void*>(ptr), &handle),
                               "zeMemGetIpcHandle");
        s != XAL_SUCCESS) {
      return s;
    }
    std::memcpy(out_vendor, &handle, sizeof handle);
    return XAL_SUCCESS;
  });
}

xal_status_t mem_ipc_open(xal_bdevice_t* device, const uint8_t* vendor, size_t bytes,
                          int32_t owner_pid, xal_devptr_t* out_ptr) {
  return guarded("levelzero mem_ipc_open", [&]() -> xal_status_t {
    const ZeApi& api = device->backend->api();
    if (api.zeMemOpenIpcHandle == nullptr || api.zeMemCloseIpcHandle == nullptr) {
      return lacks("zeMemOpenIpcHandle");
    }
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    ze_ipc_mem_handle_t handle{};
    std::memcpy(&handle, vendor, sizeof handle);
    ze_context_handle_t context = device->context();
    void* pointer = nullptr;
    if (ze_result_t r = api.zeMemOpenIpcHandle(context, device->handle, handle, 0, &pointer);
        r != ZE_RESULT_SUCCESS) {
      return refuse(device, r,
                    "mem_ipc_open: the driver cannot map the handle of process " +
                        std::to_string(owner_pid) + " on " + device_text(device));
    }
    // The mapping must hold what the handle's header says it names.
    void* base = nullptr;
    size_t size = 0;
    if (api.zeMemGetAddressRange != nullptr &&
        api.zeMemGetAddressRange(context, pointer, &base, &size) == ZE_RESULT_SUCCESS) {
      if (xal_status_t s = support::check_ipc_mapping(bytes, size, "the driver");
          s != XAL_SUCCESS) {
        (void)api.zeMemCloseIpcHandle(context, pointer);
        return s;
      }
    }
    const auto address = reinterpret_cast<xal_devptr_t>(pointer);
    device->ipc_owners.add(address, bytes, owner_pid);
    std::lock_guard lock(device->mutex);
    device->ipc_mappings.emplace(address,
                                 xal_bdevice_s::IpcMapping{device->generation, context});
    *out_ptr = address;
    return XAL_SUCCESS;
  });
}

xal_status_t mem_ipc_close(xal_bdevice_t* device, xal_devptr_t ptr) {
  return guarded("levelzero mem_ipc_close", [&]() -> xal_status_t {
    xal_bdevice_s::IpcMapping mapping{};
    {
      std::lock_guard lock(device->mutex);
      auto found = device->ipc_mappings.find(ptr);
      if (found == device->ipc_mappings.end()) {
        return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                      "mem_ipc_close: " + hex(ptr) + " is not IPC memory of " +
                          device_text(device));
      }
      mapping = found->second;
      device->ipc_mappings.erase(found);
      device->ipc_owners.remove(ptr);
      // A reset closed it already.
      if (mapping.generation != device->generation) return XAL_SUCCESS;
    }
    return check(device,
                 device->backend->api().zeMemCloseIpcHandle(mapping.context,
                                                            reinterpret_cast<void*>(ptr)),
                 "zeMemCloseIpcHandle");
  });
}

}  // namespace xal::levelzero
