// Modules from OpenCL C source or SPIR-V, and kernel launches.
#include "backend.h"
#include "entries.h"

#include <cstring>
#include <string>
#include <vector>

namespace xal::opencl {
namespace {

std::string build_log(const ClApi& api, cl_program program, cl_device_id device) {
  size_t size = 0;
  if (api.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0) {
    return {};
  }
  std::string log(size, '\0');
  api.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  log.resize(std::strlen(log.c_str()));
  while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
  return log;
}

const char* format_name(uint32_t format) {
  switch (format) {
    case XAL_MODULE_FORMAT_PTX: return "PTX";
    case XAL_MODULE_FORMAT_CUBIN: return "CUBIN";
    case XAL_MODULE_FORMAT_FATBIN: return "FATBIN";
    case XAL_MODULE_FORMAT_HSACO: return "HSACO";
    case XAL_MODULE_FORMAT_NATIVE: return "NATIVE";
    default: return "unknown";
  }
}

bool all_positive(const uint32_t (&v)[3]) { return v[0] > 0 && v[1] > 0 && v[2] > 0; }

}  // namespace

// Builds `program` for `device` with xal's options; reports the build log
// on failure. Shared with builtin_kernels.cpp.
xal_status_t build_program(xal_bdevice_s& device, cl_program program, const char* what) {
  const ClApi& api = device.backend->api();
  const xal_backend_services_t* s = device.backend->services;
  std::string options = "-cl-kernel-arg-info";
  const char* extra = s != nullptr && s->get_config != nullptr
                          ? s->get_config("XAL_OPENCL_BUILD_OPTIONS")
                          : nullptr;
  if (extra != nullptr && *extra != '\0') options += std::string(" ") + extra;
  const cl_int rc = api.clBuildProgram(program, 1, &device.id, options.c_str(), nullptr, nullptr);
  if (rc == CL_SUCCESS) return XAL_SUCCESS;
  const std::string log = build_log(api, program, device.id);
  if (s != nullptr && s->log != nullptr && !log.empty()) {
    s->log(XAL_LOG_ERROR, "opencl", (std::string(what) + " build log:\n" + log).c_str());
  }
  return report_cl(s, rc, "clBuildProgram",
                   std::string(what) + " failed to build for '" + device.info.name +
                       "'; build log: " + (log.empty() ? "(empty)" : log));
}

void release_module(xal_bmodule_s& module) {
  const ClApi& api = module.device->backend->api();
  std::lock_guard lock(module.mutex);
  for (auto& [name, k] : module.kernels) api.clReleaseKernel(k->kernel);
  module.kernels.clear();
  if (module.program != nullptr) api.clReleaseProgram(module.program);
  module.program = nullptr;
}

xal_status_t module_load(xal_bdevice_t* device, uint32_t format, const void* image,
                         size_t bytes, xal_bmodule_t** out) {
  const xal_backend_services_t* s = device->backend->services;
  return guarded(Entry{s}, "module_load", [&]() -> xal_status_t {
    const ClApi& api = device->backend->api();
    if (image == nullptr || bytes == 0) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT, "module_load: empty image");
    }
    cl_int rc = CL_SUCCESS;
    cl_program program = nullptr;
    if (format == XAL_MODULE_FORMAT_OPENCL_C) {
      const char* src = static_cast<const char*>(image);
      size_t length = bytes;
      while (length > 0 && src[length - 1] == '\0') --length;  // a NUL is optional
      program = api.clCreateProgramWithSource(device->context, 1, &src, &length, &rc);
      if (rc != CL_SUCCESS) return report_cl(s, rc, "clCreateProgramWithSource");
    } else if (format == XAL_MODULE_FORMAT_SPIRV) {
      if (api.clCreateProgramWithIL == nullptr ||
          device->info.il_version.find("SPIR-V") == std::string::npos) {
        return report(s, XAL_ERROR_NOT_SUPPORTED,
                      "module_load: '" + device->info.name +
                          "' does not take SPIR-V (CL_DEVICE_IL_VERSION is '" +
                          device->info.il_version + "'); load OpenCL C source instead");
      }
      program = api.clCreateProgramWithIL(device->context, image, bytes, &rc);
      if (rc != CL_SUCCESS) return report_cl(s, rc, "clCreateProgramWithIL");
    } else {
      return report(s, XAL_ERROR_NOT_SUPPORTED,
                    std::string("module_load: format ") + format_name(format) +
                        " is not supported by the OpenCL backend (OpenCL C source and "
                        "SPIR-V only)");
    }
    const xal_status_t st = build_program(*device, program, "module");
    if (st != XAL_SUCCESS) {
      api.clReleaseProgram(program);
      return st;
    }
    auto module = std::make_unique<xal_bmodule_s>();
    module->device = device;
    module->program = program;
    *out = device->backend->modules.add(std::move(module));
    return XAL_SUCCESS;
  });
}

xal_status_t module_unload(xal_bmodule_t* module) {
  xal_backend_s* b = module->device->backend;
  return guarded(Entry{b->services}, "module_unload", [&]() -> xal_status_t {
    std::unique_ptr<xal_bmodule_s> owned = b->modules.remove(module);
    if (!owned) return report(b->services, XAL_ERROR_INVALID_HANDLE, "module_unload: unknown module");
    release_module(*owned);
    return XAL_SUCCESS;
  });
}

xal_status_t kernel_get(xal_bmodule_t* module, const char* name, xal_bkernel_t** out) {
  const xal_backend_services_t* s = module->device->backend->services;
  return guarded(Entry{s}, "kernel_get", [&]() -> xal_status_t {
    if (name == nullptr) return report(s, XAL_ERROR_INVALID_ARGUMENT, "kernel_get: NULL name");
    const ClApi& api = module->device->backend->api();
    std::lock_guard lock(module->mutex);
    auto found = module->kernels.find(name);
    if (found != module->kernels.end()) {
      *out = found->second.get();
      return XAL_SUCCESS;
    }
    cl_int rc = CL_SUCCESS;
    auto k = std::make_unique<xal_bkernel_s>();
    k->module = module;
    k->name = name;
    k->kernel = api.clCreateKernel(module->program, name, &rc);
    if (rc != CL_SUCCESS) {
      return report_cl(s, rc, "clCreateKernel",
                       "no kernel named '" + std::string(name) + "' in the module");
    }
    rc = api.clGetKernelInfo(k->kernel, CL_KERNEL_NUM_ARGS, sizeof(k->num_args), &k->num_args,
                             nullptr);
    if (rc != CL_SUCCESS) {
      api.clReleaseKernel(k->kernel);
      return report_cl(s, rc, "clGetKernelInfo");
    }
    if (api.clGetKernelArgInfo != nullptr) {
      std::vector<cl_kernel_arg_address_qualifier> q(k->num_args);
      bool ok = true;
      for (cl_uint i = 0; i < k->num_args && ok; ++i) {
        ok = api.clGetKernelArgInfo(k->kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(q[i]),
                                    &q[i], nullptr) == CL_SUCCESS;
      }
      if (ok) k->qualifiers = std::move(q);
    }
    xal_bkernel_s* raw = k.get();
    module->kernels.emplace(name, std::move(k));
    *out = raw;
    return XAL_SUCCESS;
  });
}

xal_status_t kernel_launch(xal_bstream_t* stream, xal_bkernel_t* kernel,
                           const xal_launch_config_t* config, void** args, size_t arg_count) {
  const xal_backend_services_t* s = stream->device->backend->services;
  return guarded(Entry{s}, "kernel_launch", [&]() -> xal_status_t {
    const xal_backend_s& b = *stream->device->backend;
    const ClApi& api = b.api();
    if (config == nullptr || config->arg_sizes == nullptr) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    "kernel_launch: OpenCL needs config->arg_sizes (the size of each argument)");
    }
    if (arg_count != kernel->num_args) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    "kernel_launch: '" + kernel->name + "' takes " +
                        std::to_string(kernel->num_args) + " arguments, " +
                        std::to_string(arg_count) + " given");
    }
    if (arg_count > 0 && args == nullptr) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT, "kernel_launch: args is NULL");
    }
    if (!all_positive(config->grid) || !all_positive(config->block)) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT, "kernel_launch: grid and block must be >= 1");
    }
    if (config->shared_memory_bytes != 0) {
      return report(s, XAL_ERROR_NOT_SUPPORTED,
                    "kernel_launch: OpenCL has no dynamic shared memory; pass a __local "
                    "argument with its size in arg_sizes instead");
    }
    std::lock_guard lock(kernel->mutex);
    std::vector<cl_mem> sub_buffers;
    auto release_subs = [&] {
      for (cl_mem m : sub_buffers) stream->device->backend->releases().release(api, m);
    };
    for (size_t i = 0; i < arg_count; ++i) {
      const size_t size = config->arg_sizes[i];
      const cl_uint index = static_cast<cl_uint>(i);
      const bool known = !kernel->qualifiers.empty();
      const cl_kernel_arg_address_qualifier q =
          known ? kernel->qualifiers[i] : CL_KERNEL_ARG_ADDRESS_PRIVATE;
      cl_int rc = CL_SUCCESS;
      bool pointer = q == CL_KERNEL_ARG_ADDRESS_GLOBAL || q == CL_KERNEL_ARG_ADDRESS_CONSTANT;
      xal_devptr_t ptr = 0;
      if (!known && size == sizeof(xal_devptr_t) && args[i] != nullptr) {
        std::memcpy(&ptr, args[i], sizeof(ptr));
        pointer = b.resolve(ptr, 1).has_value();  // by value: a live address
      }
      if (q == CL_KERNEL_ARG_ADDRESS_LOCAL) {
        rc = api.clSetKernelArg(kernel->kernel, index, size, nullptr);
      } else if (pointer) {
        if (size != sizeof(xal_devptr_t) || args[i] == nullptr) {
          release_subs();
          return report(s, XAL_ERROR_INVALID_ARGUMENT,
                        "kernel_launch: argument " + std::to_string(i) +
                            " is a pointer: pass an xal_devptr_t with arg_sizes 8");
        }
        std::memcpy(&ptr, args[i], sizeof(ptr));
        cl_mem mem = nullptr;
        if (ptr != 0) {
          Resolved r;
          const xal_status_t st =
              resolve_or_report(b, stream->device->context, ptr, 1, "kernel_launch", r);
          if (st != XAL_SUCCESS) {
            release_subs();
            return st;
          }
          mem = r.mem;
          if (r.offset != 0) {
            // An address inside an allocation: a sub-buffer from there on.
            if (r.offset % stream->device->info.base_addr_align_bytes != 0) {
              release_subs();
              return report(s, XAL_ERROR_INVALID_ARGUMENT,
                            "kernel_launch: argument " + std::to_string(i) + " is at offset " +
                                std::to_string(r.offset) +
                                " of its allocation; OpenCL needs a multiple of " +
                                std::to_string(stream->device->info.base_addr_align_bytes));
            }
            const cl_buffer_region region{r.offset, r.alloc_size - r.offset};
            mem = api.clCreateSubBuffer(r.mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                        &region, &rc);
            if (rc != CL_SUCCESS) {
              release_subs();
              return report_cl(s, rc, "clCreateSubBuffer", "argument " + std::to_string(i));
            }
            sub_buffers.push_back(mem);
          }
        }
        rc = api.clSetKernelArg(kernel->kernel, index, sizeof(cl_mem), &mem);
      } else {
        rc = api.clSetKernelArg(kernel->kernel, index, size, args[i]);
      }
      if (rc != CL_SUCCESS) {
        release_subs();
        return report_cl(s, rc, "clSetKernelArg",
                         "argument " + std::to_string(i) + " of '" + kernel->name + "'");
      }
    }
    size_t global[3], local[3];
    for (int d = 0; d < 3; ++d) {
      local[d] = config->block[d];
      global[d] = static_cast<size_t>(config->grid[d]) * config->block[d];
    }
    const cl_uint dims = global[2] > 1 ? 3 : global[1] > 1 ? 2 : 1;
    cl_int rc = submit(*stream, [&](cl_event* ev) {
      return api.clEnqueueNDRangeKernel(stream->queue, kernel->kernel, dims, nullptr, global,
                                        local, 0, nullptr, ev);
    });
    release_subs();  // the queued command keeps what it needs
    if (rc != CL_SUCCESS) {
      return report_cl(s, rc, "clEnqueueNDRangeKernel", "kernel '" + kernel->name + "'");
    }
    rc = api.clFlush(stream->queue);
    return rc == CL_SUCCESS ? XAL_SUCCESS : report_cl(s, rc, "clFlush");
  });
}

}  // namespace xal::opencl
