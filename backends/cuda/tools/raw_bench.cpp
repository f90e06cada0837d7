// xal-cuda-rawbench: raw CUDA driver API against xal, in one run.
//
// Measures, on one CUDA device, page-locked H2D and D2H bandwidth
// (cuMemcpyHtoDAsync / cuMemcpyDtoHAsync), D2D bandwidth and the host cost
// of cuLaunchKernel, through the driver directly (dlopen of libcuda.so.1, as
// the backend does) and through xal's public ABI.
//
// Copies: each side in a set-up of its own, in turns (raw, xal, then xal,
// raw) so that both see the same machine state and as many trials. Both do
// the same work (time_copies in bench_common.cpp): page-locked host memory,
// a non-blocking stream, copies timed by events around a batch queued behind
// a spin kernel (the copies' bandwidth, which the targets are read against)
// and with the host clock from the first enqueue to the stream synchronize
// (call costs included), each after an untimed warm-up. Raw H2D/D2H are
// timed from cuMemHostAlloc memory and from malloc'ed pages registered with
// cuMemHostRegister, which is how xal_host_alloc makes page-locked memory;
// the H2D/D2H target is judged against the registered pages (the same kind
// of page-locked memory on both sides), the ratio to cuMemHostAlloc shown
// beside it.
//
// Launches and D2D: raw and through xal interleaved in one process state,
// on the same device memory (same_state.cpp). On an H200 the host cost of
// cuLaunchKernel moved by 0.4 us between set-ups and with the order of the
// sides, more than the launch target, and D2D at 1-4 MiB by 3 %; in one
// state, each round in another order, both sides match to 0.04 us and 1 %.
// The D2D figures of each side's own set-up are shown beside, not judged.
// --diagnose prints the launch paths (raw, xal, the plugin's table alone,
// cuCtxGetCurrent) and D2D timed that way, instead of the whole run.
//
// Writes a JSON report with the ratios and the targets:
//   H2D/D2H >= 0.98 of raw from 1 MiB, D2D >= 0.98, launch <= +0.2 us.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.h"
#include "dynamic_symbols.h"
#include "sides.h"
#include "xal_common/cli.hpp"

using xal::cuda::rawbench::CopySide;
using xal::cuda::rawbench::raw_copy_side;
using xal::cuda::rawbench::Options;
using xal::cuda::rawbench::Result;

namespace xal::cuda::rawbench {

CopySide raw_copy_side(const DriverSymbols& d, void* host, CUdeviceptr a, CUdeviceptr b,
                       CUstream stream, CUfunction spin, CUevent* events, std::string* error) {
  auto ok = [error](CUresult r, const char* call) {
    if (r == CUDA_SUCCESS) return true;
    *error = std::string(call) + " failed with " + std::to_string(static_cast<int>(r));
    return false;
  };
  CopySide side;
  side.copy = [=, &d](const std::string& direction, size_t bytes) {
    if (direction == "htod") return ok(d.cuMemcpyHtoDAsync(a, host, bytes, stream), "cuMemcpyHtoDAsync");
    if (direction == "dtoh") return ok(d.cuMemcpyDtoHAsync(host, a, bytes, stream), "cuMemcpyDtoHAsync");
    return ok(d.cuMemcpyDtoDAsync(b, a, bytes, stream), "cuMemcpyDtoDAsync");
  };
  side.synchronize = [=, &d] { return ok(d.cuStreamSynchronize(stream), "cuStreamSynchronize"); };
  side.gate = [=, &d](uint64_t ns) {
    void* args[] = {&ns};
    return ok(d.cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel");
  };
  side.record = [=, &d](bool start) {
    return ok(d.cuEventRecord(events[start ? 0 : 1], stream), "cuEventRecord");
  };
  side.query_start = [=, &d] {
    const CUresult r = d.cuEventQuery(events[0]);
    if (r == CUDA_ERROR_NOT_READY) return 0;
    return ok(r, "cuEventQuery") ? 1 : -1;
  };
  side.elapsed_ms = [=, &d](float* ms) {
    return ok(d.cuEventElapsedTime(ms, events[0], events[1]), "cuEventElapsedTime");
  };
  return side;
}

}  // namespace xal::cuda::rawbench

namespace {

#define CHECK_CU(call)                                                     \
  do {                                                                     \
    const CUresult r_ = (call);                                            \
    if (r_ != CUDA_SUCCESS) {                                              \
      std::fprintf(stderr, "xal-cuda-rawbench: %s failed with %d\n", #call, \
                   static_cast<int>(r_));                                  \
      return 1;                                                            \
    }                                                                      \
  } while (0)


int run_raw(const Options& o, std::vector<Result>* results) {
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
  // Pages registered as xal registers its page-locked memory (backends/cuda
  // memory.cpp): the baseline of the H2D/D2H target.
  constexpr size_t kPage = 4096;
  const size_t registered_bytes = (max_size + kPage - 1) / kPage * kPage;
  std::unique_ptr<void, decltype(&std::free)> registered(
      std::aligned_alloc(kPage, registered_bytes), &std::free);
  if (registered == nullptr || d.cuMemHostRegister == nullptr) {
    std::fprintf(stderr, "xal-cuda-rawbench: no registered host memory\n");
    return 1;
  }
  CHECK_CU(d.cuMemHostRegister(registered.get(), registered_bytes,
                               CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
  CUdeviceptr a = 0, b = 0;
  CHECK_CU(d.cuMemAlloc(&a, max_size));
  CHECK_CU(d.cuMemAlloc(&b, max_size));
  CUstream stream = nullptr;
  CHECK_CU(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUevent events[2] = {nullptr, nullptr};
  CHECK_CU(d.cuEventCreate(&events[0], CU_EVENT_DEFAULT));
  CHECK_CU(d.cuEventCreate(&events[1], CU_EVENT_DEFAULT));
  CUmodule module = nullptr;
  CHECK_CU(d.cuModuleLoadDataEx(&module, xal::cuda::rawbench::kBenchKernelsPtx, 0, nullptr, nullptr));
  CUfunction spin = nullptr;
  CHECK_CU(d.cuModuleGetFunction(&spin, module, "xal_bench_spin"));
  std::string error;
  const CopySide side = raw_copy_side(d, host, a, b, stream, spin, events, &error);
  const CopySide on_registered = raw_copy_side(d, registered.get(), a, b, stream, spin, events, &error);
  for (Result& r : *results) {
    if (!time_copies(o, r.direction, r.bytes, side, &r.raw_host_gbps, &r.raw_gbps, &error) ||
        (r.host_copy() &&
         !time_copies(o, r.direction, r.bytes, on_registered, &r.raw_registered_host_gbps,
                      &r.raw_registered_gbps, &error))) {
      std::fprintf(stderr, "xal-cuda-rawbench: raw %s: %s\n", r.direction.c_str(), error.c_str());
      return 1;
    }
  }
  d.cuModuleUnload(module);
  d.cuEventDestroy(events[0]);
  d.cuEventDestroy(events[1]);
  d.cuStreamDestroy(stream);
  d.cuMemFree(a);
  d.cuMemFree(b);
  d.cuMemHostUnregister(registered.get());
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
  bool diagnose = false;
  CLI::App app{"Raw CUDA driver API against xal: copy bandwidth and launch cost"};
  app.add_option("--out", out_dir, "folder for raw_vs_xal.json (created if missing)");
  app.add_option("--sizes", sizes, "transfer sizes (1MiB, 64MiB, ...)");
  app.add_option("--device", o.device, "CUDA device ordinal");
  using xal::common::AtLeast;
  app.add_option("--iterations", o.iterations, "copies per measurement (at least; small sizes do enough to move 64 MiB)")->check(AtLeast(1));
  app.add_option("--trials", o.trials, "measurements per figure (best kept)")->check(AtLeast(1));
  app.add_option("--launches", o.launches, "kernel launches per trial")->check(AtLeast(1));
  app.add_option("--gate-us", o.gate_us, "spin before each device-timed batch (doubled while too short)")->check(AtLeast(1));
  app.add_flag("--strict", strict, "exit 2 when a target is missed");
  app.add_flag("--diagnose", diagnose,
               "instead: raw and xal interleaved in one process state (launch, "
               "cuCtxGetCurrent, D2D on xal's memory), to place a gap");
  if (const auto status = xal::common::parse_options(app, "xal-cuda-rawbench", argc, argv)) {
    return *status;
  }
  std::string error;
  if (!xal::cuda::rawbench::parse_sizes(sizes, &o.sizes, &error)) {
    std::fprintf(stderr, "xal-cuda-rawbench: %s\n", error.c_str());
    return xal::common::kExitBadOptions;
  }
  // Before measuring, which takes minutes on a GPU with the default sizes.
  if (!xal::cuda::rawbench::prepare_out_dir(out_dir, &error)) {
    std::fprintf(stderr, "xal-cuda-rawbench: --out: %s\n", error.c_str());
    return xal::common::kExitBadOptions;
  }
  o.batch = std::min(o.batch, o.launches);
  if (diagnose) {
    if (xal::cuda::rawbench::run_diagnose(o, &error) == 0) return 0;
    std::fprintf(stderr, "xal-cuda-rawbench: --diagnose: %s\n", error.c_str());
    return 1;
  }
  std::vector<Result> results;
  for (size_t bytes : o.sizes) {
    for (const char* dir : {"htod", "dtoh", "dtod"}) results.push_back({dir, bytes});
  }
  // Raw then xal, then xal then raw: each side gets the same number of
  // trials, once before and once after the other, and keeps its best
  // figure, so that neither is compared with a run that happened to be slow.
  for (int round = 0; round < 2; ++round) {
    std::vector<Result> raw = results;
    std::vector<Result> via_xal = results;
    for (int turn = 0; turn < 2; ++turn) {
      if ((turn == 0) == (round == 0)) {
        if (run_raw(o, &raw) != 0) return 1;
      } else if (xal::cuda::rawbench::run_xal(o, &via_xal, &error) != 0) {
        std::fprintf(stderr, "xal-cuda-rawbench: xal: %s\n", error.c_str());
        return 1;
      }
    }
    for (size_t i = 0; i < results.size(); ++i) {
      Result& r = results[i];
      r.raw_gbps = std::max(r.raw_gbps, raw[i].raw_gbps);
      r.raw_host_gbps = std::max(r.raw_host_gbps, raw[i].raw_host_gbps);
      r.raw_registered_gbps = std::max(r.raw_registered_gbps, raw[i].raw_registered_gbps);
      r.raw_registered_host_gbps =
          std::max(r.raw_registered_host_gbps, raw[i].raw_registered_host_gbps);
      r.xal_gbps = std::max(r.xal_gbps, via_xal[i].xal_gbps);
      r.xal_host_gbps = std::max(r.xal_host_gbps, via_xal[i].xal_host_gbps);
    }
  }
  double raw_launch = 0, xal_launch = 0;
  if (xal::cuda::rawbench::run_same_state(o, &results, &raw_launch, &xal_launch, &error) != 0) {
    std::fprintf(stderr, "xal-cuda-rawbench: one process state: %s\n", error.c_str());
    return 1;
  }
  const bool ok = xal::cuda::rawbench::report(out_dir, o, results, raw_launch,
                                              xal_launch, &error);
  if (!error.empty()) {
    std::fprintf(stderr, "xal-cuda-rawbench: %s\n", error.c_str());
    return 1;
  }
  return (strict && !ok) ? 2 : 0;
}
