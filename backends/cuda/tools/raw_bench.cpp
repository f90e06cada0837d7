// xal-cuda-rawbench: raw CUDA driver API against xal, in one run.
//
// Measures, on one CUDA device, page-locked H2D and D2H bandwidth
// (cuMemcpyHtoDAsync / cuMemcpyDtoHAsync), D2D bandwidth and the host cost
// of cuLaunchKernel, first through the driver directly (dlopen of
// libcuda.so.1, as the backend does) and then the same through xal's public
// ABI, alternating the two (raw, xal, raw, xal) so that both see the same
// machine state and as many trials. Both sides do the same work: page-locked
// host memory, a non-blocking stream, copies timed with the host clock from
// the first enqueue to the stream synchronize (after an untimed warm-up),
// and the host time of cuLaunchKernel of an empty kernel in batches. Writes
// a JSON report with the ratios and the targets:
//   H2D/D2H >= 0.98 of raw from 1 MiB, D2D >= 0.98, launch <= +0.2 us.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench_common.h"
#include "dynamic_symbols.h"

using xal::cuda::rawbench::Options;
using xal::cuda::rawbench::Result;

namespace xal::cuda::rawbench {
int run_xal(const Options& options, std::vector<Result>* results,
            double* launch_us, std::string* error);
}

namespace {

using Clock = std::chrono::steady_clock;


#define CHECK_CU(call)                                                     \
  do {                                                                     \
    const CUresult r_ = (call);                                            \
    if (r_ != CUDA_SUCCESS) {                                              \
      std::fprintf(stderr, "xal-cuda-rawbench: %s failed with %d\n", #call, \
                   static_cast<int>(r_));                                  \
      return 1;                                                            \
    }                                                                      \
  } while (0)

int run_raw(const Options& o, std::vector<Result>* results, double* launch_us) {
  xal::cuda::DriverSymbols d;
  std::string reason;
  const char* path = std::getenv("XAL_CUDA_DRIVER");
  if (!d.load(path != nullptr ? path : "libcuda.so.1", &reason)) {
    std::fprintf(stderr, "xal-cuda-rawbench: %s\n", reason.c_str());
    return 1;
  }
  CHECK_CU(d.cuInit(0));
  CUdevice dev = 0;
  CHECK_CU(d.cuDeviceGet(&dev, o.device));
  CUcontext ctx = nullptr;
  CHECK_CU(d.cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK_CU(d.cuCtxSetCurrent(ctx));
  const size_t max_size = *std::max_element(o.sizes.begin(), o.sizes.end());
  void* host = nullptr;
  CHECK_CU(d.cuMemHostAlloc(&host, max_size, CU_MEMHOSTALLOC_PORTABLE));
  CUdeviceptr a = 0, b = 0;
  CHECK_CU(d.cuMemAlloc(&a, max_size));
  CHECK_CU(d.cuMemAlloc(&b, max_size));
  CUstream stream = nullptr;
  CHECK_CU(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  for (Result& r : *results) {
    const int iterations = iterations_for(o, r.bytes);
    double best = 0;
    // trial -1 is a warm-up, not timed.
    for (int trial = -1; trial < o.trials; ++trial) {
      const auto t0 = Clock::now();
      for (int i = 0; i < (trial < 0 ? 1 : iterations); ++i) {
        if (r.direction == "htod") {
          CHECK_CU(d.cuMemcpyHtoDAsync(a, host, r.bytes, stream));
        } else if (r.direction == "dtoh") {
          CHECK_CU(d.cuMemcpyDtoHAsync(host, a, r.bytes, stream));
        } else {
          CHECK_CU(d.cuMemcpyDtoDAsync(b, a, r.bytes, stream));
        }
      }
      CHECK_CU(d.cuStreamSynchronize(stream));
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (trial >= 0) {
        best = std::max(best, static_cast<double>(r.bytes) * iterations / s / 1e9);
      }
    }
    r.raw_gbps = best;
  }
  // Launch cost: host time to enqueue an empty kernel, in batches short
  // enough that the queue never fills.
  CUmodule module = nullptr;
  CHECK_CU(d.cuModuleLoadDataEx(&module, xal::cuda::rawbench::kEmptyKernelPtx, 0, nullptr, nullptr));
  CUfunction fn = nullptr;
  CHECK_CU(d.cuModuleGetFunction(&fn, module, "xal_empty"));
  double best_us = 1e30;
  for (int trial = 0; trial < o.trials; ++trial) {
    double total = 0;
    long count = 0;
    for (int batch = 0; batch < o.launches / o.batch; ++batch) {
      const auto t0 = Clock::now();
      for (int i = 0; i < o.batch; ++i) {
        CHECK_CU(d.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, nullptr,
                                  nullptr));
      }
      total += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      count += o.batch;
      CHECK_CU(d.cuStreamSynchronize(stream));
    }
    best_us = std::min(best_us, total / static_cast<double>(count));
  }
  *launch_us = best_us;
  d.cuModuleUnload(module);
  d.cuStreamDestroy(stream);
  d.cuMemFree(a);
  d.cuMemFree(b);
  d.cuMemFreeHost(host);
  d.cuDevicePrimaryCtxRelease(dev);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string out_dir = ".";
  std::vector<std::string> sizes = {"1MiB", "4MiB", "16MiB", "64MiB", "256MiB"};
  bool strict = false;
  CLI::App app{"Raw CUDA driver API against xal: copy bandwidth and launch cost"};
  app.add_option("--out", out_dir, "folder for raw_vs_xal.json");
  app.add_option("--sizes", sizes, "transfer sizes (1MiB, 64MiB, ...)");
  app.add_option("--device", o.device, "CUDA device ordinal");
  app.add_option("--iterations", o.iterations, "copies per measurement (at least; small sizes do enough to move 64 MiB)")->check(CLI::PositiveNumber);
  app.add_option("--trials", o.trials, "measurements per figure (best kept)")->check(CLI::PositiveNumber);
  app.add_option("--launches", o.launches, "kernel launches per trial")->check(CLI::PositiveNumber);
  app.add_flag("--strict", strict, "exit 2 when a target is missed");
  CLI11_PARSE(app, argc, argv);
  std::string error;
  if (!xal::cuda::rawbench::parse_sizes(sizes, &o.sizes, &error)) {
    std::fprintf(stderr, "xal-cuda-rawbench: %s\n", error.c_str());
    return 1;
  }
  o.batch = std::min(o.batch, o.launches);
  std::vector<Result> results;
  for (size_t bytes : o.sizes) {
    for (const char* dir : {"htod", "dtoh", "dtod"}) results.push_back({dir, bytes});
  }
  // Raw, xal, raw, xal: each side gets the same number of trials, half
  // before and half after the other's, and keeps its best figure, so that
  // neither is compared with a run that happened to be slow.
  double raw_launch = 1e30, xal_launch = 1e30;
  for (int round = 0; round < 2; ++round) {
    std::vector<Result> raw = results;
    std::vector<Result> via_xal = results;
    double raw_us = 0, xal_us = 0;
    if (run_raw(o, &raw, &raw_us) != 0) return 1;
    if (xal::cuda::rawbench::run_xal(o, &via_xal, &xal_us, &error) != 0) {
      std::fprintf(stderr, "xal-cuda-rawbench: xal: %s\n", error.c_str());
      return 1;
    }
    for (size_t i = 0; i < results.size(); ++i) {
      results[i].raw_gbps = std::max(results[i].raw_gbps, raw[i].raw_gbps);
      results[i].xal_gbps = std::max(results[i].xal_gbps, via_xal[i].xal_gbps);
    }
    raw_launch = std::min(raw_launch, raw_us);
    xal_launch = std::min(xal_launch, xal_us);
  }
  const bool ok = xal::cuda::rawbench::report(out_dir, o, results, raw_launch,
                                              xal_launch, &error);
  if (!error.empty()) {
    std::fprintf(stderr, "xal-cuda-rawbench: %s\n", error.c_str());
    return 1;
  }
  return (strict && !ok) ? 2 : 0;
}
