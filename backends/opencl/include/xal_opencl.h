/*
 * xal_opencl.h -- extension of the OpenCL backend, reached through the
 * plugin table's get_extension(backend, XAL_OPENCL_REDUCE_EXTENSION).
 *
 * Element-wise reductions on the device with xal's own OpenCL C kernels,
 * for a collectives engine that keeps data on the device. C99.
 */
#ifndef XAL_OPENCL_H_
#define XAL_OPENCL_H_

#include "xal/xal_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XAL_OPENCL_REDUCE_EXTENSION "xal_opencl_reduce_v1"

typedef struct xal_opencl_reduce_v1_t {
  size_t struct_size;
  /* dst[i] = dst[i] op src[i] for i < count, ordered on `stream`. dst and
   * src are device addresses of the stream's OpenCL context, aligned to the
   * element size. op: SUM, PROD, MIN, MAX (AVG: reduce with SUM, then
   * divide). All ten dtypes; f64 needs cl_khr_fp64 (else NOT_SUPPORTED),
   * f16 and bf16 compute in float and round to nearest even. The kernels
   * are built at first use. dtype and op are xal_dtype_t and xal_op_t
   * values; others give INVALID_ARGUMENT. Thread-safe. */
  xal_status_t (*reduce)(xal_bstream_t* stream, xal_devptr_t dst,
                         xal_devptr_t src, size_t count, uint32_t dtype,
                         uint32_t op);
  /* dst[i] = dst[i] / divisor (integer division for integer dtypes), for
   * the AVG reduction. divisor > 0. Thread-safe. */
  xal_status_t (*divide)(xal_bstream_t* stream, xal_devptr_t dst,
                         size_t count, uint32_t dtype, uint32_t divisor);
} xal_opencl_reduce_v1_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XAL_OPENCL_H_ */
