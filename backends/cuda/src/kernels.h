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
// The extension table for `name`, or null. Thread-safe. Its entries load
// the device's module and get the kernel on first use: not for a host
// function (see BuiltinKernels).
const void* kernels_extension(xal_backend_t* backend, const char* name);

// Every embedded kernel of one device, loaded and got up front on a
// caller's thread (the collectives without NCCL, at comm_create): with
// CUDA's lazy loading (the default since 12.2) a module load or a kernel's
// first use may wait for the device's streams, and in a host function,
// which those streams wait for, that never returns. Valid until the
// backend shuts down; after a reset of the device a launch gives the
// stale-module error.
struct BuiltinKernels {
  xal_bkernel_t* reduce[4][XAL_DTYPE_COUNT] = {};  // by op: SUM, PROD, MIN, MAX
  xal_bkernel_t* scale[XAL_DTYPE_COUNT] = {};
};
// Loads the device's module and gets every kernel. Thread-safe.
xal_status_t builtin_kernels_load(xal_bdevice_t* device, BuiltinKernels* out);
// As the extension's reduce and scale, with kernels got before: no module
// load, no cuModuleGetFunction.
xal_status_t builtin_reduce(const BuiltinKernels& kernels, xal_bstream_t* stream,
                            xal_devptr_t dst, xal_devptr_t src, size_t count,
                            xal_dtype_t dtype, xal_op_t op);
xal_status_t builtin_scale(const BuiltinKernels& kernels, xal_bstream_t* stream,
                           xal_devptr_t dst, size_t count, xal_dtype_t dtype, double divisor);

}  // namespace xal::cuda
