// Modules from SPIR-V (zeModuleCreate, with the build log in the error
// message) and kernel launches on a stream's command list.
#include "entries.h"
#include "errors.h"
#include "status_map.h"
#include "xalsupport/module_entries.h"

namespace xal::levelzero {
namespace {

// The build log text, and the log destroyed.
std::string take_build_log(const ZeApi& api, ze_module_build_log_handle_t log) {
  if (log == nullptr) return "";
  std::string text;
  size_t size = 0;
  if (api.zeModuleBuildLogGetString != nullptr &&
      api.zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS &&
      size > 0) {
    text.resize(size);
    if (api.zeModuleBuildLogGetString(log, &size, text.data()) != ZE_RESULT_SUCCESS) {
      text.clear();
    }
    while (!text.empty() && text.back() == '\0') text.pop_back();
  }
  if (api.zeModuleBuildLogDestroy != nullptr) (void)api.zeModuleBuildLogDestroy(log);
  return text;
}

}  // namespace

xal_status_t module_load(xal_bdevice_t* device, uint32_t format,
                         const void* image, size_t bytes,
                         xal_bmodule_t** out_module) {
  return guarded("levelzero module_load", [&]() -> xal_status_t {
    const ZeApi& api = device->backend->api();
    if (api.zeModuleCreate == nullptr || api.zeKernelCreate == nullptr ||
        api.zeCommandListAppendLaunchKernel == nullptr) {
      return report(XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                    "the Level Zero loader lacks the module functions");
    }
    if (xal_status_t s = support::check_module_image(
            format, XAL_MODULE_FORMAT_SPIRV, "the Level Zero backend loads SPIR-V modules only",
            image, bytes);
        s != XAL_SUCCESS) {
      return s;
    }
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr,
                          ZE_MODULE_FORMAT_IL_SPIRV, bytes,
                          static_cast<const uint8_t*>(image), "", nullptr};
    auto module = std::make_unique<xal_bmodule_s>();
    module->device = device;
    ze_module_build_log_handle_t log = nullptr;
    const ze_result_t r = api.zeModuleCreate(device->context(), device->handle, &desc,
                                             &module->handle, &log);
    const std::string build_log = take_build_log(api, log);
    if (r != ZE_RESULT_SUCCESS) {
      xal_status_t s = check(device, r, "zeModuleCreate");
      if (!build_log.empty()) {
        const StatusMapping mapping = map_status(r);
        s = report(s, r, mapping.name,
                   std::string("zeModuleCreate failed: ") + mapping.name +
                       "; build log:\n" + build_log);
      }
      return s;
    }
    std::lock_guard lock(device->mutex);
    *out_module = support::keep(device->modules, std::move(module),
                                device->generation);
    return XAL_SUCCESS;
  });
}

// Waits for the device's streams first (launches of the module may be
// queued on any of them, and the spec forbids destroying a kernel or module
// the device may still use), unless the device is lost. When that wait
// fails (e.g. XAL_ERROR_TIMEOUT) the module is kept, to be destroyed at the
// device's reset or at shutdown, and the error returned. Else it is
// released even when the driver refuses to destroy it (that error is
// returned): the core forgets a module whatever this returns, so nothing
// may call it again. Thread-safe.
xal_status_t module_unload(xal_bmodule_t* module) {
  return guarded("levelzero module_unload", [&]() -> xal_status_t {
    xal_bdevice_s* device = module->device;
    std::unique_ptr<xal_bmodule_s> owned;
    std::vector<std::shared_ptr<xal_bstream_s>> streams;
    {
      std::lock_guard lock(device->mutex);
      owned = support::take(device->modules, module);
      if (owned == nullptr) {
        return report(XAL_ERROR_INVALID_HANDLE, 0, nullptr,
                      "not a live Level Zero module");
      }
      if (owned->generation != device->generation) return XAL_SUCCESS;
      if (device->sticky.healthy()) {
        for (const auto& [key, stream] : device->streams) {
          if (stream->generation == device->generation) streams.push_back(stream);
        }
      }
    }
    for (const auto& stream : streams) {
      const xal_status_t s = stream_fence(stream.get(), true);
      std::lock_guard lock(device->mutex);
      if (s != XAL_SUCCESS && device->sticky.healthy() &&
          owned->generation == device->generation) {
        device->modules.emplace(module, std::move(owned));  // for reset or shutdown
        return s;
      }
    }
    const ZeApi& api = device->backend->api();
    for (const auto& kernel : owned->kernels) (void)api.zeKernelDestroy(kernel->handle);
    return check(device, api.zeModuleDestroy(owned->handle), "zeModuleDestroy");
  });
}

xal_status_t kernel_get(xal_bmodule_t* module, const char* name,
                        xal_bkernel_t** out_kernel) {
  return guarded("levelzero kernel_get", [&]() -> xal_status_t {
    if (name == nullptr) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr, "kernel_get: null name");
    }
    if (xal_status_t s = enter(module->device, module->generation, "the module");
        s != XAL_SUCCESS) {
      return s;
    }
    auto create = [&](xal_bkernel_s& kernel) {
      ze_kernel_desc_t desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
      return check(module->device,
                   module->device->backend->api().zeKernelCreate(module->handle, &desc,
                                                                 &kernel.handle),
                   "zeKernelCreate");
    };
    return support::find_or_add_kernel(*module, name, create, out_kernel);
  });
}

xal_status_t kernel_launch(xal_bstream_t* stream, xal_bkernel_t* kernel,
                           const xal_launch_config_t* config, void** args,
                           size_t arg_count) {
  return guarded("levelzero kernel_launch", [&]() -> xal_status_t {
    if (xal_status_t s = support::check_launch_arguments(config, args, arg_count);
        s != XAL_SUCCESS) {
      return s;
    }
    if (arg_count > 0 && config->arg_sizes == nullptr) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "kernel_launch: Level Zero needs xal_launch_config_t.arg_sizes");
    }
    if (config->shared_memory_bytes != 0) {
      return report(XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                    "kernel_launch: Level Zero has no dynamic shared memory per launch "
                    "(local memory is sized per __local kernel argument)");
    }
    xal_bdevice_s* device = stream->device;
    if (xal_status_t s = enter(device, stream->generation, "the stream");
        s != XAL_SUCCESS) {
      return s;
    }
    const ZeApi& api = device->backend->api();
    std::lock_guard kernel_lock(kernel->mutex);
    if (xal_status_t s = check(device,
                               api.zeKernelSetGroupSize(kernel->handle, config->block[0],
                                                        config->block[1],
                                                        config->block[2]),
                               "zeKernelSetGroupSize");
        s != XAL_SUCCESS) {
      return s;
    }
    for (size_t i = 0; i < arg_count; ++i) {
      if (xal_status_t s = check(device,
                                 api.zeKernelSetArgumentValue(
                                     kernel->handle, static_cast<uint32_t>(i),
                                     config->arg_sizes[i], args[i]),
                                 "zeKernelSetArgumentValue");
          s != XAL_SUCCESS) {
        return s;
      }
    }
    const ze_group_count_t groups{config->grid[0], config->grid[1], config->grid[2]};
    std::lock_guard lock(stream->mutex);
    stream->dirty = true;
    if (xal_status_t s = barrier_before(stream); s != XAL_SUCCESS) return s;
    if (xal_status_t s = check(device,
                               api.zeCommandListAppendLaunchKernel(
                                   stream->list, kernel->handle, &groups, nullptr, 0,
                                   nullptr),
                               "zeCommandListAppendLaunchKernel");
        s != XAL_SUCCESS) {
      return s;
    }
    if (!stream->explicit_order) return XAL_SUCCESS;
    return check(device, api.zeCommandListAppendBarrier(stream->list, nullptr, 0, nullptr),
                 "zeCommandListAppendBarrier");
  });
}

}  // namespace xal::levelzero
