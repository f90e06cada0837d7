#include "xalsupport/module_entries.h"

#include <string>

#include "xalsupport/report.h"

namespace xal::support {

xal_status_t check_module_image(uint32_t format, uint32_t accepted, const char* loads_only,
                                const void* image, size_t bytes) {
  if (format != accepted) {
    return report(XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                  std::string(loads_only) + " (format " + std::to_string(format) +
                      " given)");
  }
  if (image == nullptr || bytes == 0) {
    return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr, "module_load: empty image");
  }
  return XAL_SUCCESS;
}

xal_status_t check_launch_arguments(const xal_launch_config_t* config, void** args,
                                    size_t arg_count) {
  if (config == nullptr || (arg_count > 0 && args == nullptr)) {
    return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                  "kernel_launch: null config or arguments");
  }
  return XAL_SUCCESS;
}

}  // namespace xal::support
