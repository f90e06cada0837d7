// The backend instance: init (the runtime, its devices, RCCL, rocm-smi),
// shutdown and describe.
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
  return guarded(Entry{}, "hip init", [&]() -> xal_status_t {
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
  return guarded(Entry{}, "hip shutdown", [&]() -> xal_status_t {
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
  return guarded(Entry{}, "hip describe", [&]() -> xal_status_t {
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

}  // namespace xal::hip
