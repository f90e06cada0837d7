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

#include "stream.hpp"
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
