// framework_driver.h -- the driver calls a framework makes on its own (its
// memory, its streams), taken from the simulated driver the plugin loaded
// (XAL_CUDA_DRIVER), for the interop tests. SIMULATION ONLY.
#pragma once

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>

namespace xal::cuda::test {

struct FrameworkDriver {
  CUresult (*retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*release)(CUdevice) = nullptr;
  CUresult (*set_current)(CUcontext) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*htod)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*dtoh)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*memset_async)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
  CUresult (*stream_create)(CUstream*, unsigned int) = nullptr;
  CUresult (*stream_destroy)(CUstream) = nullptr;
  CUresult (*stream_synchronize)(CUstream) = nullptr;
  CUresult (*stream_query)(CUstream) = nullptr;

  bool complete() const {
    return retain && release && set_current && mem_alloc && mem_free && htod && dtoh &&
           memset_async && stream_create && stream_destroy && stream_synchronize &&
           stream_query;
  }

  // The driver the plugin opened (it stays loaded while xal is).
  static FrameworkDriver open() {
    FrameworkDriver f;
    const char* path = std::getenv("XAL_CUDA_DRIVER");
    void* lib = path != nullptr ? dlopen(path, RTLD_LAZY | RTLD_LOCAL) : nullptr;
    if (lib == nullptr) return f;
    using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult*);
    auto get = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
    auto find = [get](const char* name, auto* out) {
      void* fn = nullptr;
      CUdriverProcAddressQueryResult status{};
      if (get != nullptr &&
          get(name, &fn, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) == CUDA_SUCCESS) {
        *out = reinterpret_cast<std::remove_reference_t<decltype(*out)>>(fn);
      }
    };
    find("cuDevicePrimaryCtxRetain", &f.retain);
    find("cuDevicePrimaryCtxRelease", &f.release);
    find("cuCtxSetCurrent", &f.set_current);
    find("cuMemAlloc", &f.mem_alloc);
    find("cuMemFree", &f.mem_free);
    find("cuMemcpyHtoD", &f.htod);
    find("cuMemcpyDtoH", &f.dtoh);
    find("cuMemsetD8Async", &f.memset_async);
    find("cuStreamCreate", &f.stream_create);
    find("cuStreamDestroy", &f.stream_destroy);
    find("cuStreamSynchronize", &f.stream_synchronize);
    find("cuStreamQuery", &f.stream_query);
    return f;  // the library stays open, as the plugin keeps it
  }

  // Makes device `ordinal`'s primary context current, as the CUDA runtime
  // does, holding a reference to it until release_all().
  CUresult use_device(int ordinal) {
    CUcontext ctx = nullptr;
    CUresult r = retain(&ctx, ordinal);
    if (r != CUDA_SUCCESS) return r;
    ++retained[ordinal];
    return set_current(ctx);
  }
  void release_all() {
    for (int i = 0; i < 8; ++i) {
      for (; retained[i] > 0; --retained[i]) release(i);
    }
    set_current(nullptr);
  }

  int retained[8] = {};
};

}  // namespace xal::cuda::test
