// sim_rccl_hip.cpp -- the simulated NCCL over the simulated HIP runtime, as
// the tests' librccl.so.1 (SIMULATION ONLY): its host functions and device
// count, from the runtime this library is linked with.
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include "nccl_sim_state.h"

namespace xalsim_nccl {

bool launch_host_func(ncclStream_t stream, void (*fn)(void*), void* user) {
  return hipLaunchHostFunc(static_cast<hipStream_t>(stream), fn, user) == hipSuccess;
}

int device_count() {
  int count = 0;
  return hipGetDeviceCount(&count) == hipSuccess ? count : -1;
}

}  // namespace xalsim_nccl
