// kernels.h -- the kernels xal runs on CUDA devices itself (reductions for
// the hierarchical collectives), embedded in the plugin at build time, and
// the extension table that exposes them.
//
// Extension "xal_cuda_reduce_v1" (through the table's get_extension):
//   reduce(stream, dst, src, count, dtype, op): dst[i] = dst[i] op src[i]
//     on `stream`, op one of SUM, PROD, MIN, MAX (AVG: SUM then scale).
//   scale(stream, dst, count, dtype, divisor): dst[i] /= divisor.
// The stream is the backend's own (xal_handle_get_native of a public one).
#pragma once

#include "xal/xal_backend.h"

extern "C" {
typedef struct xal_cuda_reduce_v1_t {
  size_t struct_size;
  xal_status_t (*reduce)(xal_bstream_t* stream, xal_devptr_t dst,
                         xal_devptr_t src, size_t count, xal_dtype_t dtype,
                         xal_op_t op);
  xal_status_t (*scale)(xal_bstream_t* stream, xal_devptr_t dst, size_t count,
                        xal_dtype_t dtype, double divisor);
} xal_cuda_reduce_v1_t;
}

#define XAL_CUDA_REDUCE_EXTENSION "xal_cuda_reduce_v1"

namespace xal::cuda {

// True when the plugin was built with nvcc and holds the kernels.
bool kernels_embedded();
// The extension table for `name`, or null. Thread-safe.
const void* kernels_extension(xal_backend_t* backend, const char* name);

}  // namespace xal::cuda
