// ABI 1.1 interop: memory and streams the caller made through the HIP
// runtime, which xal uses but never frees or destroys, and IPC handles
// (hipIpcGetMemHandle, hipIpcOpenMemHandle, hipIpcCloseMemHandle).
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "entries.h"
#include "xal_common/strings.hpp"
#include "errors.h"
#include "status_map.h"
#include "xalsupport/interop_entries.h"

namespace xal::hip {
namespace {

static_assert(sizeof(hipIpcMemHandle_t) <= XAL_IPC_VENDOR_BYTES);

using common::hex;

std::string ordinal_text(const xal_bdevice_s* device) {
  return "HIP device " + std::to_string(device->ordinal);
}

// INVALID_ARGUMENT for a native object that is not the device's: with the
// HIP code when the runtime refused it (a sticky code still marks the
// device, through check()).
xal_status_t refuse(xal_bdevice_s* device, hipError_t code, const std::string& message) {
  if (code == hipSuccess) return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr, message);
  const StatusMapping mapping = map_status(static_cast<int64_t>(code));
  if (mapping.sticky) return check(device, code, message.c_str());
  return report(XAL_ERROR_INVALID_ARGUMENT, static_cast<int64_t>(code), mapping.name,
                message + " (" + mapping.name + " " +
                    std::to_string(static_cast<int>(code)) + ")");
}

xal_status_t lacks(const char* function) {
  return support::report_lacks("the HIP runtime", function);
}

// Whether attributes name device memory. HIP 6 renumbered hipMemoryType
// after CUDA's (device 2, managed 3); HIP 5 has device 1 and isManaged.
// The structure's layout is the same in both.
bool device_memory(const xal_backend_s& backend, const hipPointerAttribute_t& a) {
  const int type = static_cast<int>(a.memoryType);
  if (backend.runtime_version >= 60000000) return type == 2 || type == 3;
  return type == 1 || a.isManaged != 0;
}

// hipIpcMemLazyEnablePeerAccess, which hipIpcOpenMemHandle requires: 0 in
// HIP 5 (this header), 1 since HIP 6.
unsigned int ipc_open_flags(const xal_backend_s& backend) {
  return backend.runtime_version >= 60000000 ? 1u : hipIpcMemLazyEnablePeerAccess;
}

}  // namespace

xal_status_t mem_import(xal_bdevice_t* device, uint64_t native, size_t bytes,
                        uint32_t flags, xal_devptr_t* out_ptr) {
  return guarded(Entry{}, "hip mem_import", [&]() -> xal_status_t {
    const HipApi& api = device->backend->api();
    if ((flags & XAL_MEM_IMPORT_HOST) != 0) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "mem_import: HIP devices import device memory only; register host "
                    "memory with xal_host_register");
    }
    if (api.hipPointerGetAttributes == nullptr) return lacks("hipPointerGetAttributes");
    if (api.hipMemGetAddressRange == nullptr) return lacks("hipMemGetAddressRange");
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    void* pointer = reinterpret_cast<void*>(native);
    const std::string what = "mem_import: " + hex(native);
    hipPointerAttribute_t attributes{};
    if (hipError_t r = api.hipPointerGetAttributes(&attributes, pointer); r != hipSuccess) {
      return refuse(device, r, what + " is not memory of the HIP runtime");
    }
    if (!device_memory(*device->backend, attributes)) {
      return refuse(device, hipSuccess,
                    what + " is host memory, not device memory of " + ordinal_text(device));
    }
    if (attributes.device != device->ordinal) {
      return refuse(device, hipSuccess,
                    what + " is memory of HIP device " + std::to_string(attributes.device) +
                        ", not of " + ordinal_text(device));
    }
    hipDeviceptr_t base = nullptr;
    size_t size = 0;
    if (hipError_t r = api.hipMemGetAddressRange(&base, &size, pointer); r != hipSuccess) {
      return refuse(device, r, what + " is not inside a HIP allocation");
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
  return guarded(Entry{}, "hip stream_import", [&]() -> xal_status_t {
    const HipApi& api = device->backend->api();
    if (api.hipStreamGetFlags == nullptr) return lacks("hipStreamGetFlags");
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    auto handle = reinterpret_cast<hipStream_t>(native);
    const std::string what = "stream_import: " + hex(native);
    unsigned int stream_flags = 0;
    if (hipError_t r = api.hipStreamGetFlags(handle, &stream_flags); r != hipSuccess) {
      return refuse(device, r, what + " is not a live HIP stream");
    }
    // Runtimes before HIP 5.6 cannot say which device a stream is of.
    if (api.hipStreamGetDevice != nullptr) {
      hipDevice_t owner = 0;
      if (hipError_t r = api.hipStreamGetDevice(handle, &owner); r != hipSuccess) {
        return refuse(device, r, what + " is not a live HIP stream");
      }
      if (owner != device->ordinal) {
        return refuse(device, hipSuccess,
                      what + " is a stream of HIP device " + std::to_string(owner) +
                          ", not of " + ordinal_text(device));
      }
    }
    auto stream = std::make_unique<xal_bstream_s>();
    stream->device = device;
    stream->handle = handle;
    stream->imported = true;
    std::lock_guard lock(device->mutex);
    *out_stream = support::keep(device->streams, std::move(stream), device->generation);
    return XAL_SUCCESS;
  });
}

xal_status_t mem_ipc_get(xal_bdevice_t* device, xal_devptr_t ptr, size_t /*bytes*/,
                         uint8_t* out_vendor) {
  return guarded(Entry{}, "hip mem_ipc_get", [&]() -> xal_status_t {
    const HipApi& api = device->backend->api();
    if (api.hipIpcGetMemHandle == nullptr) return lacks("hipIpcGetMemHandle");
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    hipIpcMemHandle_t handle{};
    if (xal_status_t s = check(device,
                               api.hipIpcGetMemHandle(&handle, reinterpret_cast<void*>(ptr)),
                               "hipIpcGetMemHandle");
        s != XAL_SUCCESS) {
      return s;
    }
    std::memcpy(out_vendor, &handle, sizeof handle);
    return XAL_SUCCESS;
  });
}

xal_status_t mem_ipc_open(xal_bdevice_t* device, const uint8_t* vendor, size_t bytes,
                          int32_t owner_pid, xal_devptr_t* out_ptr) {
  return guarded(Entry{}, "hip mem_ipc_open", [&]() -> xal_status_t {
    const HipApi& api = device->backend->api();
    if (api.hipIpcOpenMemHandle == nullptr || api.hipIpcCloseMemHandle == nullptr) {
      return lacks("hipIpcOpenMemHandle");
    }
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    hipIpcMemHandle_t handle{};
    std::memcpy(&handle, vendor, sizeof handle);
    void* pointer = nullptr;
    if (hipError_t r = api.hipIpcOpenMemHandle(&pointer, handle, ipc_open_flags(*device->backend));
        r != hipSuccess) {
      return refuse(device, r,
                    "mem_ipc_open: the HIP runtime cannot map the handle of process " +
                        std::to_string(owner_pid) + " on " + ordinal_text(device));
    }
    // The mapping must hold what the handle's header says it names.
    hipDeviceptr_t base = nullptr;
    size_t size = 0;
    if (api.hipMemGetAddressRange != nullptr &&
        api.hipMemGetAddressRange(&base, &size, pointer) == hipSuccess) {
      if (xal_status_t s = support::check_ipc_mapping(bytes, size, "the HIP runtime");
          s != XAL_SUCCESS) {
        (void)api.hipIpcCloseMemHandle(pointer);
        return s;
      }
    }
    const auto address = reinterpret_cast<xal_devptr_t>(pointer);
    device->ipc_owners.add(address, bytes, owner_pid);
    std::lock_guard lock(device->mutex);
    device->ipc_mappings.emplace(address, device->generation);
    *out_ptr = address;
    return XAL_SUCCESS;
  });
}

xal_status_t mem_ipc_close(xal_bdevice_t* device, xal_devptr_t ptr) {
  return guarded(Entry{}, "hip mem_ipc_close", [&]() -> xal_status_t {
    {
      std::lock_guard lock(device->mutex);
      auto found = device->ipc_mappings.find(ptr);
      if (found == device->ipc_mappings.end()) {
        return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                      "mem_ipc_close: " + hex(ptr) + " is not IPC memory of " +
                          ordinal_text(device));
      }
      const bool live = found->second == device->generation && device->sticky.healthy();
      device->ipc_mappings.erase(found);
      device->ipc_owners.remove(ptr);
      // A reset unmapped it already; a lost device's mappings go with it.
      if (!live) return XAL_SUCCESS;
    }
    const HipApi& api = device->backend->api();
    if (xal_status_t s = check(device, select_device(api, device->ordinal), "hipSetDevice");
        s != XAL_SUCCESS) {
      return s;
    }
    return check(device, api.hipIpcCloseMemHandle(reinterpret_cast<void*>(ptr)),
                 "hipIpcCloseMemHandle");
  });
}

}  // namespace xal::hip
