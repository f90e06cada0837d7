// module.cpp -- PTX/cubin/fatbin modules, kernels and launches.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend.h"
#include "entries.h"

namespace xal::cuda {

namespace {

constexpr size_t kLogBytes = 16384;

std::string trimmed_log(const std::vector<char>& log) {
  std::string text(log.data());
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

// Loads one image into the device's context (current on this thread) with
// the JIT error log; on failure returns the driver's failure, not recorded,
// its message ending with the log when there is one.
CUresult load_image(xal_bdevice_s* device, const ModuleImage& image,
                    CUmodule* out, xal_backend_s::Failure* out_failure) {
  xal_backend_s* backend = device->backend;
  // PTX is text that the driver reads up to a NUL: make sure there is one.
  std::string ptx;
  const void* data = image.data;
  if (image.format == XAL_MODULE_FORMAT_PTX) {
    ptx.assign(static_cast<const char*>(image.data), image.bytes);
    data = ptx.c_str();
  }
  // Option values are passed in the pointer itself: the log sizes are
  // unsigned int (CU_JIT_*_LOG_BUFFER_SIZE_BYTES), the buffers char*.
  std::vector<char> error_log(kLogBytes, '\0');
  std::vector<char> info_log(kLogBytes, '\0');
  CUjit_option options[] = {
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  constexpr auto kLogSize = static_cast<unsigned int>(kLogBytes - 1);
  void* values[] = {error_log.data(),
                    reinterpret_cast<void*>(static_cast<uintptr_t>(kLogSize)),
                    info_log.data(),
                    reinterpret_cast<void*>(static_cast<uintptr_t>(kLogSize))};
  CUresult r = device->make_current();
  if (r != CUDA_SUCCESS) {
    *out_failure = backend->describe_failure(r, "cuCtxSetCurrent", device);
    return r;
  }
  r = backend->driver.cuModuleLoadDataEx(out, data, 4, options, values);
  if (r != CUDA_SUCCESS) {
    *out_failure = backend->describe_failure(r, "cuModuleLoadDataEx", device);
    const std::string log = trimmed_log(error_log);
    if (!log.empty()) out_failure->message += "; JIT log:\n" + log;
  }
  return r;
}

}  // namespace

xal_status_t module_load_any(xal_bdevice_t* device,
                             std::span<const ModuleImage> images,
                             const std::string& what,
                             xal_bmodule_t** out_module) {
  xal_backend_s* backend = device->backend;
  if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
  auto module = std::make_unique<xal_bmodule_s>();
  module->device = device;
  std::lock_guard<std::mutex> lock(device->objects_mutex);
  module->generation = device->generation.load();
  std::vector<xal_backend_s::Failure> failures;
  bool loaded = false;
  for (const ModuleImage& image : images) {
    xal_backend_s::Failure failure;
    if (load_image(device, image, &module->module, &failure) == CUDA_SUCCESS) {
      loaded = true;
      break;
    }
    failures.push_back(std::move(failure));
    if (device->unhealthy.load()) break;  // a sticky error: stop here
  }
  if (!loaded) {
    if (failures.empty()) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT, "cuda: no module image");
    }
    if (failures.size() == 1 && what.empty()) return backend->report(failures[0]);
    // Every image failed: say which, each with its error and log.
    xal_backend_s::Failure all = failures.back();
    all.message = "cuda: " + what + " do not load on device " +
                  std::to_string(device->index) + " (driver CUDA " +
                  std::to_string(backend->driver_version / 1000) + "." +
                  std::to_string(backend->driver_version % 1000 / 10) + ")";
    for (size_t i = 0; i < failures.size(); ++i) {
      std::string_view detail = failures[i].message;
      if (detail.starts_with("cuda: ")) detail.remove_prefix(6);
      all.message += std::string(i == 0 ? ": " : "; ") + images[i].label +
                     ": " + std::string(detail);
    }
    return backend->report(all);
  }
  xal_bmodule_s* raw = module.get();
  try {
    device->modules.emplace(raw, std::move(module));
  } catch (...) {
    backend->driver.cuModuleUnload(raw->module);
    throw;
  }
  *out_module = raw;
  return XAL_SUCCESS;
}

xal_status_t module_load(xal_bdevice_t* device, uint32_t format,
                         const void* image, size_t bytes,
                         xal_bmodule_t** out_module) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    const DriverSymbols& d = backend->driver;
    if (d.cuModuleLoadDataEx == nullptr) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: the driver has no cuModuleLoadDataEx");
    }
    if (format != XAL_MODULE_FORMAT_PTX && format != XAL_MODULE_FORMAT_CUBIN &&
        format != XAL_MODULE_FORMAT_FATBIN) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: module format " + std::to_string(format) +
                                " is not PTX, cubin or fatbin");
    }
    if (image == nullptr || bytes == 0) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: empty module image");
    }
    const ModuleImage one{format, image, bytes, "image"};
    return module_load_any(device, std::span<const ModuleImage>(&one, 1), "",
                           out_module);
  });
}

xal_status_t module_unload(xal_bmodule_t* module) {
  xal_bdevice_s* device = module->device;
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    std::lock_guard<std::mutex> lock(device->objects_mutex);
    auto it = device->modules.find(module);
    if (it == device->modules.end()) {
      return backend->error(XAL_ERROR_INVALID_HANDLE, "cuda: unknown module");
    }
    CUresult r = CUDA_SUCCESS;
    if (module->generation == device->generation.load() &&
        !device->unhealthy.load()) {
      r = device->make_current();
      if (r == CUDA_SUCCESS) r = backend->driver.cuModuleUnload(module->module);
    }
    device->modules.erase(it);
    return r == CUDA_SUCCESS ? XAL_SUCCESS
                             : backend->fail(r, "cuModuleUnload", device);
  });
}

xal_status_t kernel_get(xal_bmodule_t* module, const char* name,
                        xal_bkernel_t** out_kernel) {
  xal_bdevice_s* device = module->device;
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (name == nullptr || *name == '\0') {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: kernel name is empty");
    }
    if (module->generation != device->generation.load())
      return stale_object(backend, "module");
    std::lock_guard<std::mutex> lock(module->mutex);
    auto it = module->kernels.find(name);
    if (it != module->kernels.end()) {
      *out_kernel = it->second.get();
      return XAL_SUCCESS;
    }
    if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
    CUfunction function = nullptr;
    CUresult r = device->make_current();
    if (r == CUDA_SUCCESS) {
      r = backend->driver.cuModuleGetFunction(&function, module->module, name);
    }
    if (r == CUDA_ERROR_NOT_FOUND) {
      backend->fail(r, "cuModuleGetFunction", device);
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            std::string("cuda: the module has no kernel '") +
                                name + "'");
    }
    if (r != CUDA_SUCCESS) return backend->fail(r, "cuModuleGetFunction", device);
    auto kernel = std::make_unique<xal_bkernel_s>();
    kernel->module = module;
    kernel->function = function;
    kernel->name = name;
    *out_kernel = kernel.get();
    module->kernels.emplace(name, std::move(kernel));
    return XAL_SUCCESS;
  });
}

xal_status_t kernel_launch(xal_bstream_t* stream, xal_bkernel_t* kernel,
                           const xal_launch_config_t* config, void** args,
                           size_t arg_count) {
  xal_bdevice_s* device = stream->device;
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    (void)arg_count;  // CUDA knows each kernel's parameters
    if (config == nullptr) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: kernel launch without a configuration");
    }
    if (kernel->module->device != device) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: the kernel's module was loaded on another "
                            "device than the stream's");
    }
    const uint64_t generation = device->generation.load(std::memory_order_acquire);
    if (stream->generation != generation) return stale_object(backend, "stream");
    if (kernel->module->generation != generation)
      return stale_object(backend, "module");
    if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
    CUresult r = device->make_current();
    // Dynamic shared memory past the default 48 KiB needs the kernel's
    // opt-in (up to the device's limit, which the driver checks).
    constexpr uint32_t kDefaultSharedBytes = 48 * 1024;
    if (r == CUDA_SUCCESS && config->shared_memory_bytes > kDefaultSharedBytes &&
        backend->driver.cuFuncSetAttribute != nullptr) {
      r = backend->driver.cuFuncSetAttribute(
          kernel->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
          static_cast<int>(config->shared_memory_bytes));
      if (r != CUDA_SUCCESS) return backend->fail(r, "cuFuncSetAttribute", device);
    }
    if (r == CUDA_SUCCESS) {
      r = backend->driver.cuLaunchKernel(
          kernel->function, config->grid[0], config->grid[1], config->grid[2],
          config->block[0], config->block[1], config->block[2],
          config->shared_memory_bytes, stream->stream, args, nullptr);
    }
    return r == CUDA_SUCCESS ? XAL_SUCCESS
                             : backend->fail(r, "cuLaunchKernel", device);
  });
}

}  // namespace xal::cuda
