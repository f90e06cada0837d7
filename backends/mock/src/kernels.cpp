#include "kernels.h"

#include <sys/prctl.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "backend.h"
#include "device.h"
#include "errors.h"
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

// --- The compute model: gemm_f32 and the MLP's elementwise kernels ------

// C[i, :] = beta * C[i, :] + alpha * sum_k A[i, k] * B[k, :] over rows
// [r0, r1), with A (m x k) and B (k x n) row-major. The sum runs over k in
// order, so the result does not depend on the split into rows. The inner
// loop works on 8 floats at a time (GCC/Clang vector extension), so that
// it is vectorised at -O2 as well.
void gemm_rows(float* c, const float* a, const float* b, uint64_t r0, uint64_t r1,
               uint64_t n, uint64_t k, float alpha, float beta) {
  using v8 = float __attribute__((vector_size(32)));
  const uint64_t n8 = n / 8 * 8;
  for (uint64_t i = r0; i < r1; ++i) {
    float* ci = c + i * n;
    if (beta == 0.0f) std::fill(ci, ci + n, 0.0f);
    else if (beta != 1.0f) for (uint64_t j = 0; j < n; ++j) ci[j] *= beta;
    for (uint64_t p = 0; p < k; ++p) {
      const float av = alpha * a[i * k + p];
      const float* bp = b + p * n;
      const v8 va = {av, av, av, av, av, av, av, av};
      for (uint64_t j = 0; j < n8; j += 8) {
        v8 vb, vc;
        std::memcpy(&vb, bp + j, sizeof vb);
        std::memcpy(&vc, ci + j, sizeof vc);
        vc += va * vb;
        std::memcpy(ci + j, &vc, sizeof vc);
      }
      for (uint64_t j = n8; j < n; ++j) ci[j] += av * bp[j];
    }
  }
}

double paced_seconds(const Device& device, double flops) {
  return paced_gemm_seconds(device.profile(), device.backend().compute_scale(), flops);
}

// Sleeps until `start + seconds`. The worker's timer slack is set to 1 ns
// once (Linux's default of 50 us would add up over short kernels). A wake-up
// that came late (the host's scheduler, not the card) is taken off the next
// paced kernel's wait when that kernel follows at once on the same stream
// (each stream has its own worker thread), so that a run of products keeps
// the card's pace on average; after an idle gap the debt is forgotten.
void pace_until(std::chrono::steady_clock::time_point start, double seconds) {
  using Clock = std::chrono::steady_clock;
  struct Pace {
    bool slack_set = prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) == 0;
    Clock::time_point due{}, end{};  // of the previous paced kernel
  };
  thread_local Pace pace;
  if (seconds <= 0.0) return;
  constexpr auto kGap = std::chrono::microseconds(500);
  const auto length = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Clock::duration late{0};
  if (pace.end > pace.due && start - pace.end < kGap) late = std::min(pace.end - pace.due, length);
  const auto due = start + length - late;
  std::this_thread::sleep_until(due);
  pace.due = due;
  pace.end = Clock::now();
}

constexpr uint32_t kGemmTransA = 1, kGemmTransB = 2;

Stream::Body prepare_gemm(Device& d, void** a) {
  const auto m = arg<uint32_t>(a, 3), n = arg<uint32_t>(a, 4), k = arg<uint32_t>(a, 5);
  const auto flags = arg<uint32_t>(a, 6);
  const auto alpha = arg<float>(a, 7), beta = arg<float>(a, 8);
  if (flags & ~(kGemmTransA | kGemmTransB))
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                "gemm_f32: flags " + std::to_string(flags) +
                    " has bits other than 1 (A transposed) and 2 (B transposed)");
  auto* c = device_array<float>(d, arg<xal_devptr_t>(a, 0), uint64_t{m} * n, "gemm_f32", "c");
  const auto* pa = device_array<float>(d, arg<xal_devptr_t>(a, 1), uint64_t{m} * k, "gemm_f32", "a");
  const auto* pb = device_array<float>(d, arg<xal_devptr_t>(a, 2), uint64_t{k} * n, "gemm_f32", "b");
  const double seconds = paced_seconds(d, 2.0 * m * n * k);
  return [=] {
    const auto start = std::chrono::steady_clock::now();
    // op(A) as m x k and op(B) as k x n, row-major: a transposed operand is
    // copied once (O(mk) or O(kn) beside the O(mnk) product).
    std::vector<float> ta, tb;
    const float* A = pa;
    const float* B = pb;
    if (flags & kGemmTransA) {  // a holds k x m
      ta.resize(uint64_t{m} * k);
      for (uint64_t p = 0; p < k; ++p)
        for (uint64_t i = 0; i < m; ++i) ta[i * k + p] = pa[p * m + i];
      A = ta.data();
    }
    if (flags & kGemmTransB) {  // b holds n x k
      tb.resize(uint64_t{k} * n);
      for (uint64_t j = 0; j < n; ++j)
        for (uint64_t p = 0; p < k; ++p) tb[p * n + j] = pb[j * k + p];
      B = tb.data();
    }
    constexpr double kParallelFlops = 1 << 26;
    if (2.0 * m * n * k < kParallelFlops) {
      gemm_rows(c, A, B, 0, m, n, k, alpha, beta);
    } else {
      tbb::parallel_for(tbb::blocked_range<uint64_t>(0, m, 16),
                        [&](const tbb::blocked_range<uint64_t>& r) {
                          gemm_rows(c, A, B, r.begin(), r.end(), n, k, alpha, beta);
                        });
    }
    pace_until(start, seconds);
  };
}

Stream::Body prepare_relu(Device& d, void** a) {
  const auto n = arg<uint64_t>(a, 2);
  auto* y = device_array<float>(d, arg<xal_devptr_t>(a, 0), n, "relu_f32", "y");
  const auto* x = device_array<float>(d, arg<xal_devptr_t>(a, 1), n, "relu_f32", "x");
  return [=] { for_each_index(n, [&](uint64_t i) { y[i] = x[i] > 0.0f ? x[i] : 0.0f; }); };
}

Stream::Body prepare_relu_grad(Device& d, void** a) {
  const auto n = arg<uint64_t>(a, 3);
  auto* dx = device_array<float>(d, arg<xal_devptr_t>(a, 0), n, "relu_grad_f32", "dx");
  const auto* dy = device_array<float>(d, arg<xal_devptr_t>(a, 1), n, "relu_grad_f32", "dy");
  const auto* y = device_array<float>(d, arg<xal_devptr_t>(a, 2), n, "relu_grad_f32", "y");
  return [=] { for_each_index(n, [&](uint64_t i) { dx[i] = y[i] > 0.0f ? dy[i] : 0.0f; }); };
}

const std::array<KernelDef, 9>& kernels() {
  static const std::array<KernelDef, 9> table = {{
      {"fill_u32", "fill_u32(devptr dst, uint32 value, uint64 count)", {8, 4, 8}, prepare_fill},
      {"iota_u32", "iota_u32(devptr dst, uint32 start, uint64 count)", {8, 4, 8}, prepare_iota},
      {"scale_f32", "scale_f32(devptr x, float a, uint64 count)", {8, 4, 8}, prepare_scale},
      {"saxpy_f32", "saxpy_f32(devptr y, devptr x, float a, uint64 count)", {8, 8, 4, 8}, prepare_saxpy},
      {"add_f32", "add_f32(devptr c, devptr a, devptr b, uint64 count)", {8, 8, 8, 8}, prepare_add},
      {"sleep_us", "sleep_us(uint64 microseconds)", {8}, prepare_sleep},
      {"gemm_f32",
       "gemm_f32(devptr c, devptr a, devptr b, uint32 m, uint32 n, uint32 k, uint32 flags, "
       "float alpha, float beta)",
       {8, 8, 8, 4, 4, 4, 4, 4, 4}, prepare_gemm},
      {"relu_f32", "relu_f32(devptr y, devptr x, uint64 count)", {8, 8, 8}, prepare_relu},
      {"relu_grad_f32", "relu_grad_f32(devptr dx, devptr dy, devptr y, uint64 count)",
       {8, 8, 8, 8}, prepare_relu_grad},
  }};
  return table;
}

}  // namespace

double paced_gemm_seconds(const Profile& profile, double compute_scale, double flops) {
  const double rate = profile.tflops_fp16 * 1e12 * compute_scale;
  return rate > 0.0 && flops > 0.0 ? flops / rate : 0.0;
}

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
