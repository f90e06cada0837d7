// sim_nccl_cuda.cpp -- the simulated NCCL over the simulated CUDA driver
// (SIMULATION ONLY): its host functions and device count, reached through
// cuGetProcAddress, the one function the simulated driver exports.
#include <cuda.h>

#include "nccl_sim_state.h"

namespace xalsim_nccl {
namespace {

template <typename Fn>
Fn driver_fn(const char* name) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult found{};
  if (cuGetProcAddress(name, &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS) {
    return nullptr;
  }
  return reinterpret_cast<Fn>(fn);
}

}  // namespace

bool launch_host_func(ncclStream_t stream, void (*fn)(void*), void* user) {
  static const auto launch = driver_fn<CUresult (*)(CUstream, CUhostFn, void*)>("cuLaunchHostFunc");
  return launch != nullptr && launch(static_cast<CUstream>(stream), fn, user) == CUDA_SUCCESS;
}

int device_count() {
  static const auto get = driver_fn<CUresult (*)(int*)>("cuDeviceGetCount");
  int count = 0;
  return get != nullptr && get(&count) == CUDA_SUCCESS ? count : -1;
}

}  // namespace xalsim_nccl
