// xal_cuda_device.h -- for the CUDA tools: xal_init, and the xal device of
// CUDA ordinal N.
#pragma once

#include <cstdlib>
#include <cstring>

#include "xal/xal.h"

namespace xal::cuda::tools {

// xal_init for the CUDA tools: the CUDA backend alone unless XAL_BACKENDS
// names the backends, validation as XAL_VALIDATION says (on by default).
inline xal_status_t init_xal() {
  xal_init_options_t init{};
  init.struct_size = sizeof init;
  init.backends = std::getenv("XAL_BACKENDS") != nullptr ? nullptr : "cuda";
  init.validation = -1;
  return xal_init(&init);
}

// The device xal numbers for CUDA device `ordinal` (after xal_init), or
// null when the CUDA backend has no such device.
inline xal_device_t find_cuda_device(int ordinal) {
  uint32_t count = 0;
  if (ordinal < 0 || xal_device_count(&count) != XAL_SUCCESS) return nullptr;
  for (uint32_t i = 0; i < count; ++i) {
    xal_device_t d = nullptr;
    xal_device_properties_t p{};
    p.struct_size = sizeof p;
    if (xal_device_get(i, &d) == XAL_SUCCESS && xal_device_get_properties(d, &p) == XAL_SUCCESS &&
        std::strcmp(p.backend, "cuda") == 0 && p.backend_index == static_cast<uint32_t>(ordinal)) {
      return d;
    }
  }
  return nullptr;
}

}  // namespace xal::cuda::tools
