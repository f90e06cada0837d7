// What the module entries of the HIP and Level Zero backends share: the
// checks of module_load's image and of kernel_launch's arguments, and a
// module's kernels by name. Each backend keeps its vendor calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "xal/xal_backend.h"

namespace xal::support {

// module_load's image: XAL_ERROR_NOT_SUPPORTED, "<loads_only> (format N
// given)", for a format other than `accepted` (`loads_only` as "the HIP
// backend loads HSACO code objects only"); XAL_ERROR_INVALID_ARGUMENT for
// a null or empty image; else XAL_SUCCESS. Errors are reported through the
// plugin's services (report.h). Thread-safe.
xal_status_t check_module_image(uint32_t format, uint32_t accepted, const char* loads_only,
                                const void* image, size_t bytes);

// kernel_launch's arguments: XAL_ERROR_INVALID_ARGUMENT (reported) for a
// null config, or arguments counted but null; else XAL_SUCCESS. Thread-safe.
xal_status_t check_launch_arguments(const xal_launch_config_t* config, void** args,
                                    size_t arg_count);

// The kernel of `module` named `name` (not null): the one found before, or
// a new one that `create(kernel)` (returning xal_status_t) makes from its
// name, kept by the module (module.kernels, a vector of unique_ptr to a
// struct with `name`) until it is unloaded. The kernel handed out is owned
// by the module. Takes module.mutex; thread-safe.
template <typename Module, typename Create>
xal_status_t find_or_add_kernel(Module& module, const char* name, Create&& create,
                                xal_bkernel_t** out_kernel) {
  std::lock_guard lock(module.mutex);
  for (const auto& kernel : module.kernels) {
    if (kernel->name == name) {
      *out_kernel = kernel.get();
      return XAL_SUCCESS;
    }
  }
  using Kernel = typename decltype(module.kernels)::value_type::element_type;
  auto kernel = std::make_unique<Kernel>();
  kernel->name = name;
  if (xal_status_t s = create(*kernel); s != XAL_SUCCESS) return s;
  *out_kernel = kernel.get();
  module.kernels.push_back(std::move(kernel));
  return XAL_SUCCESS;
}

}  // namespace xal::support
