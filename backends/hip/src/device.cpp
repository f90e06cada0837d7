// Backend lifecycle and devices: init, describe, properties, sync, reset,
// health and metrics.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "entries.h"
#include "errors.h"
#include "status_map.h"
#include "xal_common/strings.hpp"
#include "xalsupport/config.h"

namespace xal::hip {
namespace {

using support::config;

void log_info(const xal_backend_services_t* services, const std::string& text) {
  if (services != nullptr && services->log != nullptr) {
    services->log(XAL_LOG_INFO, "hip", text.c_str());
  }
}

// hipError_t of an init step as BACKEND_UNAVAILABLE with the HIP code.
xal_status_t unavailable(const xal_backend_s& backend, hipError_t result,
                         const char* what) {
  const StatusMapping mapping = map_status(result);
  return report(XAL_ERROR_BACKEND_UNAVAILABLE, result, mapping.name,
                std::string(what) + " failed: " + mapping.name + " (" +
                    std::to_string(static_cast<int>(result)) + ") in " +
                    backend.library.path() + " (no usable AMD GPU?)");
}

int attribute(xal_bdevice_s* device, hipDeviceAttribute_t which) {
  int value = 0;
  if (device->backend->api().hipDeviceGetAttribute(&value, which,
                                                   device->ordinal) !=
      hipSuccess) {
    return 0;
  }
  return value;
}

std::string pci_bus_id(xal_bdevice_s* device) {
  const HipApi& api = device->backend->api();
  if (api.hipDeviceGetPCIBusId == nullptr) return "";
  char text[64] = {};
  if (api.hipDeviceGetPCIBusId(text, sizeof text, device->ordinal) !=
      hipSuccess) {
    return "";
  }
  return text;
}

// Matches each device with its rocm-smi device: by PCI address, and the
// partitions of one card (which share it) in order; takes the energy
// counter that metrics count from.
void find_smi_devices(xal_backend_s& backend, const xal_backend_services_t* services) {
  std::vector<std::string> addresses;
  for (auto& device : backend.devices) {
    const std::string address = pci_bus_id(device.get());
    const auto rank = static_cast<uint32_t>(
        std::count(addresses.begin(), addresses.end(), address));
    addresses.push_back(address);
    uint32_t index = 0;
    if (address.empty() || !backend.smi.find_index(address, rank, &index)) {
      log_info(services, "rocm-smi has no device for HIP device " +
                             std::to_string(device->ordinal) + " (PCI " + address +
                             "): no sensors");
      continue;
    }
    device->smi_index = static_cast<int>(index);
    device->energy_start_valid = backend.smi.energy_uj(index, &device->energy_start_uj);
  }
}

}  // namespace

xal_status_t init(const xal_backend_init_args_t* args,
                          xal_backend_t** out_backend) {
  return guarded("hip init", [&]() -> xal_status_t {
    if (args == nullptr || out_backend == nullptr) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "hip init: null argument");
    }
    set_services(args->services);
    auto backend = std::make_unique<xal_backend_s>();
    backend->services = args->services;
    std::string reason;
    if (!backend->library.load(config(args->services, "XAL_HIP_LIBRARY"),
                               &reason)) {
      return report(XAL_ERROR_BACKEND_UNAVAILABLE, 0, nullptr, reason);
    }
    const HipApi& api = backend->api();
    if (hipError_t r = api.hipInit(0); r != hipSuccess) {
      return unavailable(*backend, r, "hipInit");
    }
    int count = 0;
    if (hipError_t r = api.hipGetDeviceCount(&count); r != hipSuccess) {
      return unavailable(*backend, r, "hipGetDeviceCount");
    }
    if (count <= 0) {
      return report(XAL_ERROR_BACKEND_UNAVAILABLE, hipErrorNoDevice,
                    "hipErrorNoDevice",
                    "the HIP runtime " + backend->library.path() +
                        " reports no devices");
    }
    (void)api.hipDriverGetVersion(&backend->driver_version);
    (void)api.hipRuntimeGetVersion(&backend->runtime_version);
    for (int i = 0; i < count; ++i) {
      auto device = std::make_unique<xal_bdevice_s>();
      device->backend = backend.get();
      device->ordinal = i;
      backend->devices.push_back(std::move(device));
    }
    if (!backend->rccl.load(config(args->services, "XAL_RCCL_LIBRARY"),
                            backend->library.simulated(), &reason)) {
      log_info(args->services, "RCCL not used: " + reason);
    }
    if (!backend->smi.load(config(args->services, "XAL_ROCM_SMI_LIBRARY"),
                           &reason)) {
      log_info(args->services, "rocm-smi not used: " + reason);
    } else {
      find_smi_devices(*backend, args->services);
    }
    *out_backend = backend.release();
    return XAL_SUCCESS;
  });
}

xal_status_t shutdown(xal_backend_t* backend) {
  return guarded("hip shutdown", [&]() -> xal_status_t {
    std::unique_ptr<xal_backend_s> owned(backend);
    if (owned == nullptr) return XAL_SUCCESS;
    // Release what the core did not: streams, events and modules still
    // registered with a device of the current generation.
    const HipApi& api = owned->api();
    for (auto& device : owned->devices) {
      std::lock_guard lock(device->mutex);
      (void)select_device(api, device->ordinal);
      for (const auto& [key, module] : device->modules) {
        if (module->generation == device->generation) {
          (void)api.hipModuleUnload(module->handle);
        }
      }
      for (const auto& [key, event] : device->events) {
        if (event->generation == device->generation) {
          (void)api.hipEventDestroy(event->handle);
        }
      }
      for (const auto& [key, stream] : device->streams) {
        if (stream->generation == device->generation) {
          (void)api.hipStreamDestroy(stream->handle);
        }
      }
      for (const auto& [address, generation] : device->allocations) {
        if (generation == device->generation) {
          (void)api.hipFree(reinterpret_cast<void*>(address));
        }
      }
    }
    return XAL_SUCCESS;
  });
}

xal_status_t describe(xal_backend_t* backend,
                              xal_backend_describe_t* out) {
  return guarded("hip describe", [&]() -> xal_status_t {
    common::copy_string(out->name, "hip");
    const int v = backend->runtime_version;
    common::copy_string(out->driver_version,
                        "HIP " + std::to_string(v / 10000000) + "." +
                            std::to_string(v / 100000 % 100) + "." +
                            std::to_string(v % 100000));
    out->flags = 0;
    std::string note = "runtime " + backend->library.path();
    if (backend->library.simulated()) {
      out->flags |= XAL_BACKEND_FLAG_SIMULATED;
      note = "simulated driver (" + backend->library.simulated_note() +
             "), " + note;
    }
    note += !backend->rccl.available() ? "; no RCCL"
            : backend->rccl.simulated() ? "; simulated RCCL"
                                        : "; RCCL";
    note += backend->smi.available() ? "; rocm-smi" : "; no rocm-smi";
    // What this backend has been run on, first so that it is never cut.
    note = std::string(support_note) + "; " + note;
    common::copy_string(out->note, note);
    return XAL_SUCCESS;
  });
}

xal_status_t device_count(xal_backend_t* backend, uint32_t* out_count) {
  return guarded("hip device_count", [&]() -> xal_status_t {
    *out_count = static_cast<uint32_t>(backend->devices.size());
    return XAL_SUCCESS;
  });
}

xal_status_t device_get(xal_backend_t* backend, uint32_t index,
                        xal_bdevice_t** out_device) {
  return guarded("hip device_get", [&]() -> xal_status_t {
    if (index >= backend->devices.size()) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "HIP device index " + std::to_string(index) +
                        " out of range");
    }
    *out_device = backend->devices[index].get();
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_properties(xal_bdevice_t* device,
                                   xal_device_properties_t* out) {
  return guarded("hip device_get_properties", [&]() -> xal_status_t {
    xal_backend_s* backend = device->backend;
    const HipApi& api = backend->api();
    char name[256] = {};
    if (xal_status_t s = check(device, api.hipDeviceGetName(
                                           name, sizeof name, device->ordinal),
                               "hipDeviceGetName");
        s != XAL_SUCCESS) {
      return s;
    }
    common::copy_string(out->name, name);
    common::copy_string(out->vendor, "AMD");
    out->kind = XAL_DEVICE_KIND_GPU;
    if (api.hipDeviceGetUuid != nullptr) {
      hipUUID uuid{};
      if (api.hipDeviceGetUuid(&uuid, device->ordinal) == hipSuccess) {
        static_assert(sizeof(uuid.bytes) == sizeof(out->uuid));
        std::memcpy(out->uuid, uuid.bytes, sizeof out->uuid);
      }
    }
    common::copy_string(out->pci_bus_id, pci_bus_id(device));
    size_t total = 0;
    if (xal_status_t s = check(device,
                               api.hipDeviceTotalMem(&total, device->ordinal),
                               "hipDeviceTotalMem");
        s != XAL_SUCCESS) {
      return s;
    }
    out->memory_bytes = total;
    out->max_allocation_bytes = total;
    out->compute_units = static_cast<uint32_t>(
        attribute(device, hipDeviceAttributeMultiprocessorCount));
    out->core_clock_mhz = static_cast<uint32_t>(
        attribute(device, hipDeviceAttributeClockRate) / 1000);
    const int memory_khz = attribute(device, hipDeviceAttributeMemoryClockRate);
    const int bus_bits = attribute(device, hipDeviceAttributeMemoryBusWidth);
    out->memory_clock_mhz = static_cast<uint32_t>(memory_khz / 1000);
    out->memory_bus_width_bits = static_cast<uint32_t>(bus_bits);
    // Double data rate: two transfers per memory clock.
    out->peak_memory_bandwidth_gbps =
        2.0 * memory_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    uint64_t caps = XAL_DEVICE_CAP_EVENT_TIMING | XAL_DEVICE_CAP_RESET;
    if (backend->devices.size() > 1) caps |= XAL_DEVICE_CAP_PEER_COPY;
    if (api.hipHostMalloc != nullptr) caps |= XAL_DEVICE_CAP_HOST_MEMORY;
    if (api.hipModuleLoadData != nullptr &&
        api.hipModuleLaunchKernel != nullptr) {
      caps |= XAL_DEVICE_CAP_KERNELS;
    }
    if (backend->rccl.available()) caps |= XAL_DEVICE_CAP_COLLECTIVES;
    if (backend->smi.available()) caps |= XAL_DEVICE_CAP_METRICS;
    if (backend->library.simulated()) caps |= XAL_DEVICE_CAP_SIMULATED;
    // Interop, where the runtime has the calls (interop.cpp).
    if (api.hipPointerGetAttributes != nullptr && api.hipMemGetAddressRange != nullptr) {
      caps |= XAL_DEVICE_CAP_MEM_IMPORT;
    }
    if (api.hipStreamGetFlags != nullptr) caps |= XAL_DEVICE_CAP_STREAM_IMPORT;
    if (api.hipIpcGetMemHandle != nullptr && api.hipIpcOpenMemHandle != nullptr &&
        api.hipIpcCloseMemHandle != nullptr) {
      caps |= XAL_DEVICE_CAP_IPC;
    }
    out->capabilities = caps;
    return XAL_SUCCESS;
  });
}

}  // namespace xal::hip
