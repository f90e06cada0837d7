// Modules and kernels, forwarded to the backend.
#include "compute_share.hpp"
#include "error.hpp"
#include "runtime.hpp"

using namespace xal::core;

namespace {

xal_status_t no_kernels(DeviceObj* d) {
  return fail(d, XAL_ERROR_NOT_SUPPORTED,
              cat("backend ", d->backend->name, " does not support kernels"));
}

}  // namespace

extern "C" {

// Loads a code image; the module is owned by the caller. Thread-safe.
XAL_API xal_status_t xal_module_load(xal_device_t device, uint32_t format,
                                     const void* image, size_t bytes,
                                     xal_module_t* out_module) {
  return entry("xal_module_load", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (!out_module) return null_argument("out_module");
    if (!image) return fail(d, XAL_ERROR_INVALID_ARGUMENT, "image is NULL");
    if (bytes == 0) return fail(d, XAL_ERROR_INVALID_ARGUMENT, "image has 0 bytes");
    if (format > XAL_MODULE_FORMAT_NATIVE)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("module format ", format, " is out of range"));
    const xal_backend_table_t* t = d->hdr.table;
    if (!t->module_load || !t->kernel_get || !t->kernel_launch) return no_kernels(d);
    xal_bmodule_t* native = nullptr;
    const xal_status_t s = t->module_load(d->native, format, image, bytes, &native);
    if (s != XAL_SUCCESS) return fail_backend(d->backend, d, s);
    ModuleObj* m = nullptr;
    try {
      m = make_handle<ModuleObj>(t);
      m->device = d;
      m->native = native;
      std::lock_guard lock(d->state->mu);
      d->state->modules.insert(m);
    } catch (...) {
      if (m) destroy_handle(m);
      if (t->module_unload) t->module_unload(native);
      throw;
    }
    *out_module = to_handle<xal_module_t>(m);
    return XAL_SUCCESS;
  });
}

// Unloads the module; its kernels become invalid. Thread-safe.
XAL_API xal_status_t xal_module_unload(xal_module_t module) {
  return entry("xal_module_unload", [&] {
    ModuleObj* m = as_module(module);
    if (!m) return bad_handle(module, "module");
    DeviceObj* d = m->device;
    {
      std::lock_guard lock(d->state->mu);
      if (d->state->modules.erase(m) == 0) return bad_handle(module, "module");
    }
    {
      std::lock_guard lock(m->mu);  // a concurrent xal_kernel_get appends
      for (KernelObj* k : m->kernels) destroy_handle(k);
      m->kernels.clear();
    }
    xal_status_t s = XAL_SUCCESS;
    if (m->hdr.table->module_unload) s = m->hdr.table->module_unload(m->native);
    destroy_handle(m);
    return s == XAL_SUCCESS ? s : fail_backend(d->backend, d, s);
  });
}

// The kernel lives as long as its module. Thread-safe.
XAL_API xal_status_t xal_kernel_get(xal_module_t module, const char* name,
                                    xal_kernel_t* out_kernel) {
  return entry("xal_kernel_get", [&] {
    ModuleObj* m = as_module(module);
    if (!m) return bad_handle(module, "module");
    if (!name) return null_argument("name");
    if (!out_kernel) return null_argument("out_kernel");
    std::lock_guard lock(m->mu);
    for (KernelObj* k : m->kernels)
      if (k->name == name) {
        *out_kernel = to_handle<xal_kernel_t>(k);
        return XAL_SUCCESS;
      }
    xal_bkernel_t* native = nullptr;
    const xal_status_t s = m->hdr.table->kernel_get(m->native, name, &native);
    if (s != XAL_SUCCESS) return fail_backend(m->device->backend, m->device, s);
    KernelObj* k = make_handle<KernelObj>(m->hdr.table);
    k->module = m;
    k->native = native;
    try {
      k->name = name;
      m->kernels.push_back(k);
    } catch (...) {
      destroy_handle(k);
      throw;
    }
    *out_kernel = to_handle<xal_kernel_t>(k);
    return XAL_SUCCESS;
  });
}

// Launches on `stream` (of the kernel's device). Thread-safe.
XAL_API xal_status_t xal_kernel_launch(xal_stream_t stream, xal_kernel_t kernel,
                                       const xal_launch_config_t* config,
                                       void** args, size_t arg_count) {
  return entry("xal_kernel_launch", [&] {
    StreamObj* s = as_stream(stream);
    if (!s) return bad_handle(stream, "stream");
    KernelObj* k = as_kernel(kernel);
    if (!k) return bad_handle(kernel, "kernel");
    XAL_CHECK_STRUCT(config, "config");
    DeviceObj* d = k->module->device;
    if (s->device != d)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("kernel of device ", d->index,
                      " cannot run on a stream of device ", s->device->index));
    for (int i = 0; i < 3; ++i)
      if (config->grid[i] == 0 || config->block[i] == 0)
        return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                    "grid and block dimensions must all be at least 1");
    if (arg_count > 0 && !args)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("args is NULL but arg_count is ", arg_count));
    for (size_t i = 0; i < arg_count; ++i)
      if (!args[i])
        return fail(d, XAL_ERROR_INVALID_ARGUMENT, cat("args[", i, "] is NULL"));
    const xal_status_t st = submit_shared(s, [&] {
      return k->hdr.table->kernel_launch(s->native, k->native, config, args,
                                         arg_count);
    });
    if (st != XAL_SUCCESS) return fail_backend(d->backend, d, st);
    if (trace_on()) trace::launch_op(s, k->name.c_str());
    return st;
  });
}

}  // extern "C"
