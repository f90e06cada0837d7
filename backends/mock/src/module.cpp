// Mock plugin entries: modules and kernels (kernels.h).
#include "entries.h"

namespace xal::mock {

xal_status_t module_load(xal_bdevice_t* device, uint32_t format, const void* image,
                         size_t bytes, xal_bmodule_t** out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "module_load", [&] {
    check_not_null(out, "module_load: out_module");
    if (format != XAL_MODULE_FORMAT_NATIVE)
      throw Error(XAL_ERROR_NOT_SUPPORTED,
                  "module_load: the mock backend runs only XAL_MODULE_FORMAT_NATIVE "
                  "images (a list of built-in kernels: " + kernel_names() +
                      "), got format " + std::to_string(format));
    check_not_null(image, "module_load: image");
    if (bytes == 0) throw Error(XAL_ERROR_INVALID_ARGUMENT, "module_load: image size is 0");
    *out = to_handle<xal_bmodule_t>(
        d.load_module(std::string_view(static_cast<const char*>(image), bytes)));
    return XAL_SUCCESS;
  });
}

xal_status_t module_unload(xal_bmodule_t* module) {
  XAL_MOCK_REQUIRE_HANDLE(module);
  Module* m = as_module(module);
  Device& d = m->device();
  return guarded(Entry{services_of(&d)}, "module_unload", [&] {
    if (!d.unload_module(m))
      throw Error(XAL_ERROR_INVALID_HANDLE, "module_unload: not a live mock module");
    return XAL_SUCCESS;
  });
}

xal_status_t kernel_get(xal_bmodule_t* module, const char* name, xal_bkernel_t** out) {
  XAL_MOCK_REQUIRE_HANDLE(module);
  Module& m = *as_module(module);
  return guarded(Entry{services_of(&m.device())}, "kernel_get", [&] {
    check_not_null(name, "kernel_get: name");
    check_not_null(out, "kernel_get: out_kernel");
    Kernel* k = m.find(name);
    if (!k)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  std::string("kernel_get: the module has no kernel '") + name +
                      (find_kernel(name) ? "' (a built-in, but not listed in the image)"
                                         : "' (built-ins: " + kernel_names() + ")"));
    *out = to_handle<xal_bkernel_t>(k);
    return XAL_SUCCESS;
  });
}

xal_status_t kernel_launch(xal_bstream_t* stream, xal_bkernel_t* kernel,
                           const xal_launch_config_t* config, void** args,
                           size_t arg_count) {
  XAL_MOCK_REQUIRE_HANDLE(stream);
  XAL_MOCK_REQUIRE_HANDLE(kernel);
  Stream& s = *as_stream(stream);
  return guarded(Entry{services_of(&s)}, "kernel_launch", [&] {
    launch_kernel(s, *as_kernel(kernel), config, args, arg_count);
    return XAL_SUCCESS;
  });
}

}  // namespace xal::mock
