/*
 * xal_opencl.h -- extensions of the OpenCL backend, reached through the
 * plugin table's get_extension(backend, name).
 *
 * XAL_OPENCL_REDUCE_EXTENSION: element-wise reductions on the device with
 * xal's own OpenCL C kernels, for a collectives engine that keeps data on
 * the device. XAL_OPENCL_NATIVE_EXTENSION: the OpenCL objects behind xal's
 * devices and streams, for interop. C99.
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

/* The OpenCL objects behind xal's devices and streams, for a framework that
 * shares them: buffers it imports (xal_mem_import of a cl_mem) and queues
 * it adopts (xal_stream_import of a cl_command_queue) must be of the
 * device's context, which it finds here. Reached through the table's
 * get_extension(backend, XAL_OPENCL_NATIVE_EXTENSION); the device and the
 * stream are the backend's objects behind xal's handles
 * (xal_handle_get_native). The objects are not retained: they live as
 * long as the device's backend instance (context, device) or the stream
 * (queue). Typed void* so that this header needs no CL/cl.h. */
#define XAL_OPENCL_NATIVE_EXTENSION "xal_opencl_native_v1"

typedef struct xal_opencl_native_v1_t {
  size_t struct_size;
  /* The cl_context and cl_device_id of `device`; either output may be
   * NULL. Thread-safe. */
  xal_status_t (*device_objects)(xal_bdevice_t* device, void** out_context,
                                 void** out_device_id);
  /* The cl_command_queue of `stream`. Thread-safe. */
  xal_status_t (*stream_queue)(xal_bstream_t* stream, void** out_queue);
} xal_opencl_native_v1_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XAL_OPENCL_H_ */
