#include "kernels.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <array>
#include <chrono>
#include <cstring>
#include <thread>

#include "device.hpp"
#include "error.hpp"
#include "xal_common/strings.hpp"

namespace xal::mock {

namespace {

template <class T>
T arg(void** args, size_t i) {
  T value;
  std::memcpy(&value, args[i], sizeof(T));
  return value;
}

// The host address of `count` elements of T at `ptr` on `device`.
template <class T>
T* device_array(Device& device, xal_devptr_t ptr, uint64_t count,
                const char* kernel, const char* what) {
  if (count > UINT64_MAX / sizeof(T))
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                std::string(kernel) + ": element count " +
                    std::to_string(count) + " is too large");
  void* host = device.host_address(ptr, count * sizeof(T));
  if (!host)
    throw Error(XAL_ERROR_OUT_OF_BOUNDS,
                std::string(kernel) + ": argument " + what + " (" + hex(ptr) +
                    ", " + std::to_string(count * sizeof(T)) +
                    " bytes) is not inside the memory of device " +
                    std::to_string(device.index()));
  return static_cast<T*>(host);
}

template <class F>
void for_each_index(uint64_t count, F&& f) {
  constexpr uint64_t kSerial = 1u << 18;
  if (count < kSerial) {
    for (uint64_t i = 0; i < count; ++i) f(i);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<uint64_t>(0, count, kSerial / 4),
                    [&](const tbb::blocked_range<uint64_t>& r) {
                      for (uint64_t i = r.begin(); i != r.end(); ++i) f(i);
                    });
}

Stream::Body prepare_fill(Device& d, void** a) {
  const auto n = arg<uint64_t>(a, 2);
  auto* dst = device_array<uint32_t>(d, arg<xal_devptr_t>(a, 0), n, "fill_u32", "dst");
  const auto v = arg<uint32_t>(a, 1);
  return [=] { for_each_index(n, [&](uint64_t i) { dst[i] = v; }); };
}

Stream::Body prepare_iota(Device& d, void** a) {
  const auto n = arg<uint64_t>(a, 2);
  auto* dst = device_array<uint32_t>(d, arg<xal_devptr_t>(a, 0), n, "iota_u32", "dst");
  const auto start = arg<uint32_t>(a, 1);
  return [=] {
    for_each_index(n, [&](uint64_t i) { dst[i] = start + static_cast<uint32_t>(i); });
  };
}

Stream::Body prepare_scale(Device& d, void** a) {
  const auto n = arg<uint64_t>(a, 2);
  auto* x = device_array<float>(d, arg<xal_devptr_t>(a, 0), n, "scale_f32", "x");
  const auto s = arg<float>(a, 1);
  return [=] { for_each_index(n, [&](uint64_t i) { x[i] *= s; }); };
}

Stream::Body prepare_saxpy(Device& d, void** a) {
  const auto n = arg<uint64_t>(a, 3);
  auto* y = device_array<float>(d, arg<xal_devptr_t>(a, 0), n, "saxpy_f32", "y");
  const auto* x = device_array<float>(d, arg<xal_devptr_t>(a, 1), n, "saxpy_f32", "x");
  const auto s = arg<float>(a, 2);
  return [=] { for_each_index(n, [&](uint64_t i) { y[i] += s * x[i]; }); };
}

Stream::Body prepare_add(Device& d, void** a) {
  const auto n = arg<uint64_t>(a, 3);
  auto* c = device_array<float>(d, arg<xal_devptr_t>(a, 0), n, "add_f32", "c");
  const auto* x = device_array<float>(d, arg<xal_devptr_t>(a, 1), n, "add_f32", "a");
  const auto* y = device_array<float>(d, arg<xal_devptr_t>(a, 2), n, "add_f32", "b");
  return [=] { for_each_index(n, [&](uint64_t i) { c[i] = x[i] + y[i]; }); };
}

Stream::Body prepare_sleep(Device&, void** a) {
  const auto us = arg<uint64_t>(a, 0);
  if (us > 60'000'000)
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                "sleep_us: at most 60000000 microseconds, got " + std::to_string(us));
  return [=] { std::this_thread::sleep_for(std::chrono::microseconds(us)); };
}

const std::array<KernelDef, 6>& kernels() {
  static const std::array<KernelDef, 6> table = {{
      {"fill_u32", "fill_u32(devptr dst, uint32 value, uint64 count)", {8, 4, 8}, prepare_fill},
      {"iota_u32", "iota_u32(devptr dst, uint32 start, uint64 count)", {8, 4, 8}, prepare_iota},
      {"scale_f32", "scale_f32(devptr x, float a, uint64 count)", {8, 4, 8}, prepare_scale},
      {"saxpy_f32", "saxpy_f32(devptr y, devptr x, float a, uint64 count)", {8, 8, 4, 8}, prepare_saxpy},
      {"add_f32", "add_f32(devptr c, devptr a, devptr b, uint64 count)", {8, 8, 8, 8}, prepare_add},
      {"sleep_us", "sleep_us(uint64 microseconds)", {8}, prepare_sleep},
  }};
  return table;
}

}  // namespace

const KernelDef* find_kernel(std::string_view name) {
  for (const KernelDef& k : kernels())
    if (name == k.name) return &k;
  return nullptr;
}

std::string kernel_names() {
  std::string names;
  for (const KernelDef& k : kernels()) {
    if (!names.empty()) names += ", ";
    names += k.name;
  }
  return names;
}

Module::Module(Device& device, std::string_view image) : device_(device) {
  if (const size_t nul = image.find('\0'); nul != std::string_view::npos)
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                "module image byte " + std::to_string(nul) +
                    " is NUL: the mock's images are text, one built-in kernel name per line (" +
                    kernel_names() + ")");
  size_t line_no = 0;
  for (const std::string& raw : common::split(image, "\n", true)) {
    ++line_no;
    std::string_view line = raw;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = common::trim(line);
    if (line.empty()) continue;
    const KernelDef* def = find_kernel(line);
    if (!def)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "module image line " + std::to_string(line_no) +
                      ": unknown built-in kernel '" + std::string(line) +
                      "' (built-ins: " + kernel_names() + ")");
    if (!find(def->name)) kernels_.push_back(std::make_unique<Kernel>(Kernel{def, this}));
  }
  if (kernels_.empty())
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                "module image names no kernel (expected one built-in name "
                "per line: " + kernel_names() + ")");
}

Kernel* Module::find(std::string_view name) {
  for (auto& k : kernels_)
    if (name == k->def->name) return k.get();
  return nullptr;
}

void launch_kernel(Stream& stream, const Kernel& kernel,
                   const xal_launch_config_t* config, void** args,
                   size_t arg_count) {
  const KernelDef& def = *kernel.def;
  const std::string who = std::string("kernel ") + def.signature;
  if (!config || config->struct_size < sizeof(xal_launch_config_t))
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                who + ": launch config is NULL or its struct_size is too small");
  for (int i = 0; i < 3; ++i)
    if (config->grid[i] == 0 || config->block[i] == 0)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  who + ": every grid and block dimension must be at least 1");
  if (arg_count != def.arg_sizes.size())
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                who + ": expected " + std::to_string(def.arg_sizes.size()) +
                    " arguments, got " + std::to_string(arg_count));
  if (!args)
    throw Error(XAL_ERROR_INVALID_ARGUMENT, who + ": args is NULL");
  for (size_t i = 0; i < arg_count; ++i) {
    if (!args[i])
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  who + ": args[" + std::to_string(i) + "] is NULL");
    if (config->arg_sizes && config->arg_sizes[i] != def.arg_sizes[i])
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  who + ": argument " + std::to_string(i) + " is " +
                      std::to_string(def.arg_sizes[i]) + " bytes, arg_sizes says " +
                      std::to_string(config->arg_sizes[i]));
  }
  if (&stream.device() != &kernel.module->device())
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                who + ": the stream is on device " +
                    std::to_string(stream.device().index()) +
                    ", the module was loaded on device " +
                    std::to_string(kernel.module->device().index()));
  stream.enqueue({def.prepare(stream.device(), args), true});
}

}  // namespace xal::mock
