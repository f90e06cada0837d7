// status_map.h -- CUresult to xal_status_t, and which CUDA errors are sticky
// (the context is unusable until the primary context is reset).
#pragma once

#include <cuda.h>

#include "xal/xal.h"

namespace xal::cuda {

// The xal status for a CUDA result. CUDA_SUCCESS -> XAL_SUCCESS,
// CUDA_ERROR_NOT_READY -> XAL_NOT_READY; unknown codes -> XAL_ERROR_BACKEND.
// Pure function, thread-safe.
xal_status_t map_result(CUresult result);

// True for errors after which the CUDA context is corrupt: every later call
// fails until cuDevicePrimaryCtxReset (700, 702, 710, 714-719, 214, 220, 226).
bool is_sticky(CUresult result);

// The enum name of a CUDA result ("CUDA_ERROR_ILLEGAL_ADDRESS"), for use when
// the driver cannot be asked (cuGetErrorName missing or failing). Never NULL.
const char* fallback_name(CUresult result);

}  // namespace xal::cuda
