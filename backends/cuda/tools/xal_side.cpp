// xal_side.cpp -- the xal half of xal-cuda-rawbench: the same copies and
// launches through the public ABI.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.h"
#include "xal_cuda_device.h"
#include "xal/xal.h"

namespace xal::cuda::rawbench {

namespace {

using Clock = std::chrono::steady_clock;

std::string last_error(const char* call) {
  xal_error_info_t info{};
  info.struct_size = sizeof info;
  xal_last_error(&info);
  return std::string(call) + " failed: " + xal_status_name(info.status) + ": " +
         info.message;
}

#define CHECK_XAL(call)                      \
  do {                                       \
    if ((call) != XAL_SUCCESS) {             \
      *error = last_error(#call);            \
      return 1;                              \
    }                                        \
  } while (0)

}  // namespace

int run_xal(const Options& o, std::vector<Result>* results, double* launch_us,
            std::string* error) {
  xal_init_options_t init{};
  init.struct_size = sizeof init;
  init.backends = std::getenv("XAL_BACKENDS") != nullptr ? nullptr : "cuda";
  init.validation = -1;
  CHECK_XAL(xal_init(&init));
  xal_device_t dev = tools::find_cuda_device(o.device);
  if (dev == nullptr) {
    *error = "no CUDA device " + std::to_string(o.device) + " through xal";
    xal_shutdown();
    return 1;
  }
  const size_t max_size = *std::max_element(o.sizes.begin(), o.sizes.end());
  void* host = nullptr;
  CHECK_XAL(xal_host_alloc(max_size, XAL_HOST_ALLOC_DEFAULT, &host));
  xal_devptr_t a = 0, b = 0;
  CHECK_XAL(xal_mem_alloc(dev, max_size, &a));
  CHECK_XAL(xal_mem_alloc(dev, max_size, &b));
  xal_stream_t stream = nullptr;
  CHECK_XAL(xal_stream_create(dev, XAL_STREAM_NON_BLOCKING, &stream));
  for (Result& r : *results) {
    const int iterations = iterations_for(o, r.bytes);
    double best = 0;
    // trial -1 is a warm-up, not timed.
    for (int trial = -1; trial < o.trials; ++trial) {
      const auto t0 = Clock::now();
      for (int i = 0; i < (trial < 0 ? 1 : iterations); ++i) {
        if (r.direction == "htod") {
          CHECK_XAL(xal_memcpy_htod(stream, a, host, r.bytes));
        } else if (r.direction == "dtoh") {
          CHECK_XAL(xal_memcpy_dtoh(stream, host, a, r.bytes));
        } else {
          CHECK_XAL(xal_memcpy_dtod(stream, b, a, r.bytes));
        }
      }
      CHECK_XAL(xal_stream_synchronize(stream));
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (trial >= 0) {
        best = std::max(best, static_cast<double>(r.bytes) * iterations / s / 1e9);
      }
    }
    r.xal_gbps = best;
  }
  xal_module_t module = nullptr;
  CHECK_XAL(xal_module_load(dev, XAL_MODULE_FORMAT_PTX, kEmptyKernelPtx,
                            sizeof kEmptyKernelPtx - 1, &module));
  xal_kernel_t kernel = nullptr;
  CHECK_XAL(xal_kernel_get(module, "xal_empty", &kernel));
  xal_launch_config_t config{};
  config.struct_size = sizeof config;
  config.grid[0] = config.grid[1] = config.grid[2] = 1;
  config.block[0] = config.block[1] = config.block[2] = 1;
  double best_us = 1e30;
  for (int trial = 0; trial < o.trials; ++trial) {
    double total = 0;
    long launched = 0;
    for (int batch = 0; batch < o.launches / o.batch; ++batch) {
      const auto t0 = Clock::now();
      for (int i = 0; i < o.batch; ++i) {
        CHECK_XAL(xal_kernel_launch(stream, kernel, &config, nullptr, 0));
      }
      total += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      launched += o.batch;
      CHECK_XAL(xal_stream_synchronize(stream));
    }
    best_us = std::min(best_us, total / static_cast<double>(launched));
  }
  *launch_us = best_us;
  xal_module_unload(module);
  xal_stream_destroy(stream);
  xal_mem_free(dev, a);
  xal_mem_free(dev, b);
  xal_host_free(host);
  xal_shutdown();
  return 0;
}

}  // namespace xal::cuda::rawbench
