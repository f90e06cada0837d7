/* interop_check.h -- xal-cuda-interopcheck: ABI 1.1 interop on CUDA devices
 * as a framework uses it (interop_check.c). Shared by its files: the
 * driver as the framework calls it (interop_driver.c), the report
 * (interop_report.c), IPC across two processes (interop_ipc.c). C99, xal.h
 * and cuda.h's types only: the driver is opened with dlopen. */
#ifndef XAL_CUDA_INTEROP_CHECK_H_
#define XAL_CUDA_INTEROP_CHECK_H_

#include <cuda.h>
#include <stddef.h>
#include <xal/xal.h>

#define ICHECK_MAX_DEVICES 8

/* The driver functions the "framework" calls itself. */
typedef struct icheck_driver_t {
  CUresult (*init)(unsigned int);
  CUresult (*error_name)(CUresult, const char**);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*device_count)(int*);
  CUresult (*pci_bus_id)(char*, int, CUdevice);
  CUresult (*retain)(CUcontext*, CUdevice);
  CUresult (*release)(CUdevice);
  CUresult (*set_current)(CUcontext);
  CUresult (*mem_alloc)(CUdeviceptr*, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*htod)(CUdeviceptr, const void*, size_t);
  CUresult (*dtoh)(void*, CUdeviceptr, size_t);
  CUresult (*memset_async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*stream_create)(CUstream*, unsigned int);
  CUresult (*stream_destroy)(CUstream);
  CUresult (*stream_synchronize)(CUstream);
  CUresult (*stream_query)(CUstream);
} icheck_driver_t;

/* Opens the driver (XAL_CUDA_DRIVER, else libcuda.so.1) and resolves every
 * function through cuGetProcAddress, as xal's plugin does. Returns 0, or
 * -1 with the reason in `why`. */
int icheck_driver_open(icheck_driver_t* d, char* why, size_t why_size);
/* "CUDA_ERROR_INVALID_VALUE (1)" for messages; a static buffer. */
const char* icheck_cu_name(const icheck_driver_t* d, CUresult r);

/* One line of the report: a check's name, whether it passed, and what was
 * seen. Returns `ok`. */
int icheck_record(const char* name, int ok, const char* detail_format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* `status` is `want`; the detail names the call and xal's message. */
int icheck_status(const char* name, xal_status_t status, xal_status_t want);
/* The JSON report on stdout; returns the number of failed checks. */
int icheck_report(const char* driver_path, int simulated, unsigned devices, size_t count);

/* IPC across two processes: this process exports memory of `dev`, a copy
 * of this program (--ipc-child) opens it on its first CUDA device, checks
 * and overwrites it, and this process reads the child's bytes through xal
 * and through the driver. */
void icheck_ipc(const icheck_driver_t* d, xal_device_t dev, xal_stream_t stream);
/* The child's side; its exit status. */
int icheck_ipc_child(void);

#endif /* XAL_CUDA_INTEROP_CHECK_H_ */
