// Code objects (HSACO) through hipModuleLoadData and kernel launches.
#include "entries.h"
#include "errors.h"
#include "xalsupport/module_entries.h"

namespace xal::hip {

xal_status_t module_load(xal_bdevice_t* device, uint32_t format,
                         const void* image, size_t bytes,
                         xal_bmodule_t** out_module) {
  return guarded(Entry{}, "hip module_load", [&]() -> xal_status_t {
    const HipApi& api = device->backend->api();
    if (api.hipModuleLoadData == nullptr || api.hipModuleGetFunction == nullptr ||
        api.hipModuleLaunchKernel == nullptr || api.hipModuleUnload == nullptr) {
      return report(XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                    "the HIP runtime lacks the hipModule* functions");
    }
    if (xal_status_t s = support::check_module_image(
            format, XAL_MODULE_FORMAT_HSACO, "the HIP backend loads HSACO code objects only",
            image, bytes);
        s != XAL_SUCCESS) {
      return s;
    }
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    auto module = std::make_unique<xal_bmodule_s>();
    module->device = device;
    if (xal_status_t s = check(device, api.hipModuleLoadData(&module->handle, image),
                               "hipModuleLoadData");
        s != XAL_SUCCESS) {
      return s;
    }
    std::lock_guard lock(device->mutex);
    *out_module = support::keep(device->modules, std::move(module),
                                device->generation);
    return XAL_SUCCESS;
  });
}

// Unloads the module. As xal_backend.h says, the module is released
// whatever HIP says (libxal drops its handle): a refused hipSetDevice or
// hipModuleUnload is reported and returned, and the module and its
// kernels are forgotten all the same (never unloaded again at shutdown).
// A module that a reset unloaded already, or one of a device with a
// sticky error (hipDeviceReset unloads it), goes without HIP calls.
// Thread-safe, but for two unloads of one handle.
xal_status_t module_unload(xal_bmodule_t* module) {
  return guarded(Entry{}, "hip module_unload", [&]() -> xal_status_t {
    xal_bdevice_s* device = module->device;
    std::unique_ptr<xal_bmodule_s> owned;
    {
      std::lock_guard lock(device->mutex);
      owned = support::take(device->modules, module);
      if (owned == nullptr) {
        return report(XAL_ERROR_INVALID_HANDLE, 0, nullptr, "not a live HIP module");
      }
      if (owned->generation != device->generation || !device->sticky.healthy()) {
        return XAL_SUCCESS;
      }
    }
    const HipApi& api = device->backend->api();
    if (xal_status_t s = check(device, select_device(api, device->ordinal),
                               "hipSetDevice");
        s != XAL_SUCCESS) {
      return s;
    }
    return check(device, api.hipModuleUnload(owned->handle), "hipModuleUnload");
  });
}

xal_status_t kernel_get(xal_bmodule_t* module, const char* name,
                        xal_bkernel_t** out_kernel) {
  return guarded(Entry{}, "hip kernel_get", [&]() -> xal_status_t {
    if (name == nullptr) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "kernel_get: null name");
    }
    if (xal_status_t s = enter(module->device, module->generation, "the module");
        s != XAL_SUCCESS) {
      return s;
    }
    auto create = [&](xal_bkernel_s& kernel) {
      return check(module->device,
                   module->device->backend->api().hipModuleGetFunction(
                       &kernel.handle, module->handle, name),
                   "hipModuleGetFunction");
    };
    return support::find_or_add_kernel(*module, name, create, out_kernel);
  });
}

xal_status_t kernel_launch(xal_bstream_t* stream, xal_bkernel_t* kernel,
                           const xal_launch_config_t* config, void** args,
                           size_t arg_count) {
  return guarded(Entry{}, "hip kernel_launch", [&]() -> xal_status_t {
    if (xal_status_t s = support::check_launch_arguments(config, args, arg_count);
        s != XAL_SUCCESS) {
      return s;
    }
    if (xal_status_t s = enter(stream->device, stream->generation, "the stream");
        s != XAL_SUCCESS) {
      return s;
    }
    return check(stream->device,
                 stream->device->backend->api().hipModuleLaunchKernel(
                     kernel->handle, config->grid[0], config->grid[1],
                     config->grid[2], config->block[0], config->block[1],
                     config->block[2], config->shared_memory_bytes,
                     stream->handle, args, nullptr),
                 "hipModuleLaunchKernel");
  });
}

}  // namespace xal::hip
