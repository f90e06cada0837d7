// Built-in kernels of the mock backend (XAL_MODULE_FORMAT_NATIVE).
//
// A module image is text: one built-in kernel name per line ('#' starts a
// comment). Kernels run in C++ on the stream's worker and behave like
// grid-stride CUDA kernels: any grid and block (each dimension >= 1) covers
// every element. Arguments (args[i] points to the value, as cuLaunchKernel):
//
//   fill_u32 (devptr dst, uint32 value, uint64 count)      dst[i] = value
//   iota_u32 (devptr dst, uint32 start, uint64 count)      dst[i] = start + i
//   scale_f32(devptr x, float a, uint64 count)             x[i] *= a
//   saxpy_f32(devptr y, devptr x, float a, uint64 count)   y[i] += a * x[i]
//   add_f32  (devptr c, devptr a, devptr b, uint64 count)  c[i] = a[i] + b[i]
//   sleep_us (uint64 microseconds)                          busy for that long
//   gemm_f32 (devptr c, devptr a, devptr b, uint32 m, uint32 n, uint32 k,
//             uint32 flags, float alpha, float beta)
//            c (m x n) = alpha * op(a) * op(b) + beta * c, row-major; flags
//            1: a is stored k x m (transposed), 2: b is stored n x k. Paced:
//            takes at least 2mnk / (tflops_fp16 x 1e12 x XAL_MOCK_COMPUTE_SCALE)
//            seconds (the compute model; unpaced when either is 0)
//   relu_f32 (devptr y, devptr x, uint64 count)            y[i] = max(x[i], 0)
//   relu_grad_f32(devptr dx, devptr dy, devptr y, uint64 count)
//                                                  dx[i] = y[i] > 0 ? dy[i] : 0
//
// Device pointers must lie in the launching device's memory.
// Modules and kernels are immutable once built: thread-safe. A module is
// owned by its device (Device::load_module / unload_module).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "profiles.h"
#include "stream_worker.h"
#include "xal/xal.h"

namespace xal::mock {

class Device;

struct KernelDef {
  const char* name;
  const char* signature;                 // for messages and the README
  std::vector<size_t> arg_sizes;         // bytes of each argument
  // Checks and copies the arguments; returns the work to queue. Throws
  // Error (INVALID_ARGUMENT, OUT_OF_BOUNDS).
  Stream::Body (*prepare)(Device& device, void** args);
};

// The compute model: seconds a gemm_f32 of `flops` (2mnk) takes at least on
// a card of `profile` under XAL_MOCK_COMPUTE_SCALE `compute_scale`:
// flops / (tflops_fp16 x 1e12 x compute_scale); 0 (unpaced) when either is 0.
double paced_gemm_seconds(const Profile& profile, double compute_scale, double flops);

// The built-in kernel named `name`, or nullptr.
const KernelDef* find_kernel(std::string_view name);
// "fill_u32, iota_u32, ..." for messages.
std::string kernel_names();

class Module;

// A kernel of a loaded module; lives as long as its module.
struct Kernel {
  const KernelDef* def;
  Module* module;
};

class Module {
 public:
  // Parses a NATIVE image. Throws Error(INVALID_ARGUMENT) on an empty image
  // or an unknown name.
  Module(Device& device, std::string_view image);
  Device& device() const { return device_; }
  // The kernel `name` of this module, or nullptr.
  Kernel* find(std::string_view name);

 private:
  Device& device_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
};

// Checks `config` and the arguments, then queues the kernel on `stream`.
// Throws Error.
void launch_kernel(Stream& stream, const Kernel& kernel,
                   const xal_launch_config_t* config, void** args,
                   size_t arg_count);

}  // namespace xal::mock
