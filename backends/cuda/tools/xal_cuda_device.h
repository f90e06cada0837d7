// xal_cuda_device.h -- for the CUDA tools: the xal device of CUDA ordinal N.
#pragma once

#include <cstring>

#include "xal/xal.h"

namespace xal::cuda::tools {

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
