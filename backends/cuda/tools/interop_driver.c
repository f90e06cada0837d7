/* interop_driver.c -- the CUDA driver as xal-cuda-interopcheck's
 * "framework" calls it: dlopen of libcuda.so.1 (or XAL_CUDA_DRIVER) and
 * cuGetProcAddress, legacy default stream, at the CUDA version whose
 * signature is called. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop_check.h"

typedef CUresult (*icheck_proc_v2_t)(const char*, void**, int, cuuint64_t,
                                     CUdriverProcAddressQueryResult*);
typedef CUresult (*icheck_proc_v1_t)(const char*, void**, int, cuuint64_t);

static icheck_proc_v2_t proc_v2;
static icheck_proc_v1_t proc_v1;

/* A function pointer from dlsym or cuGetProcAddress (ISO C has no cast
 * between object and function pointers). */
#define ICHECK_SET(target, pointer) memcpy(&(target), &(pointer), sizeof(target))

static void* query(const char* name, int version) {
  void* fn = NULL;
  if (proc_v2) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (proc_v2(name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found) != CUDA_SUCCESS ||
        found != CU_GET_PROC_ADDRESS_SUCCESS)
      return NULL;
  } else if (proc_v1(name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM) != CUDA_SUCCESS) {
    return NULL;
  }
  return fn;
}

#define ICHECK_RESOLVE(member, name, version)                               \
  do {                                                                      \
    void* fn_ = query(name, version);                                       \
    if (!fn_) {                                                             \
      snprintf(why, why_size, "%s: no %s (CUDA %d)", path, name, version);  \
      return -1;                                                            \
    }                                                                       \
    ICHECK_SET(d->member, fn_);                                             \
  } while (0)

int icheck_driver_open(icheck_driver_t* d, char* why, size_t why_size) {
  const char* path = getenv("XAL_CUDA_DRIVER");
  void* lib;
  void* sym;
  CUresult r;
  if (!path || !*path) path = "libcuda.so.1";
  memset(d, 0, sizeof *d);
  lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, why_size, "%s", dlerror());
    return -1;
  }
  sym = dlsym(lib, "cuGetProcAddress_v2");
  if (sym) {
    ICHECK_SET(proc_v2, sym);
  } else if ((sym = dlsym(lib, "cuGetProcAddress")) != NULL) {
    ICHECK_SET(proc_v1, sym);
  } else {
    snprintf(why, why_size, "%s: no cuGetProcAddress (CUDA 11.3 or newer is needed)", path);
    return -1;
  }
  ICHECK_RESOLVE(init, "cuInit", 2000);
  ICHECK_RESOLVE(error_name, "cuGetErrorName", 6000);
  ICHECK_RESOLVE(device_get, "cuDeviceGet", 2000);
  ICHECK_RESOLVE(device_count, "cuDeviceGetCount", 2000);
  ICHECK_RESOLVE(pci_bus_id, "cuDeviceGetPCIBusId", 4010);
  ICHECK_RESOLVE(retain, "cuDevicePrimaryCtxRetain", 7000);
  ICHECK_RESOLVE(release, "cuDevicePrimaryCtxRelease", 11000);
  ICHECK_RESOLVE(set_current, "cuCtxSetCurrent", 4000);
  ICHECK_RESOLVE(mem_alloc, "cuMemAlloc", 3020);
  ICHECK_RESOLVE(mem_free, "cuMemFree", 3020);
  ICHECK_RESOLVE(htod, "cuMemcpyHtoD", 3020);
  ICHECK_RESOLVE(dtoh, "cuMemcpyDtoH", 3020);
  ICHECK_RESOLVE(memset_async, "cuMemsetD8Async", 3020);
  ICHECK_RESOLVE(stream_create, "cuStreamCreate", 2000);
  ICHECK_RESOLVE(stream_destroy, "cuStreamDestroy", 4000);
  ICHECK_RESOLVE(stream_synchronize, "cuStreamSynchronize", 2000);
  ICHECK_RESOLVE(stream_query, "cuStreamQuery", 2000);
  r = d->init(0);
  if (r != CUDA_SUCCESS) {
    snprintf(why, why_size, "cuInit: %s", icheck_cu_name(d, r));
    return -1;
  }
  return 0;
}

const char* icheck_cu_name(const icheck_driver_t* d, CUresult r) {
  static char text[96];
  const char* name = NULL;
  if (!d->error_name || d->error_name(r, &name) != CUDA_SUCCESS || !name) name = "?";
  snprintf(text, sizeof text, "%s (%d)", name, (int)r);
  return text;
}
