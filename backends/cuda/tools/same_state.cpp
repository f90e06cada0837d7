// same_state.cpp -- raw driver calls and xal calls timed in ONE process
// state: xal initialised, the same primary context current, raw objects
// (stream, events, module) made beside xal's, on xal's own device memory,
// the two sides interleaved round by round.
//
// The launch target ("added launch overhead over cuLaunchKernel") is read
// here: on an H200 (2026-12-04) the host cost of one cuLaunchKernel moved by
// up to 0.4 us between runs of the same program, more than the target, so
// raw and xal timed in separate set-ups one after the other could differ by
// that much with no xal code involved. --diagnose also times D2D copies
// this way, to tell a gap of xal's call path from one of the set-up.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "dynamic_symbols.h"
#include "sides.h"
#include "xal/xal.h"
#include "xal/xal_backend.h"
#include "xal_cuda_device.h"

namespace xal::cuda::rawbench {

namespace {

using Clock = std::chrono::steady_clock;

std::string xal_error(const char* call) {
  xal_error_info_t info{};
  info.struct_size = sizeof info;
  xal_last_error(&info);
  return std::string(call) + ": " + xal_status_name(info.status) + ": " + info.message;
}

// Host microseconds per call of `fn` over `calls` calls in batches of
// `batch`, with `sync` (untimed) after each batch so that the stream's
// queue never fills.
template <typename Fn, typename Sync>
double us_per_call(int calls, int batch, Fn&& fn, Sync&& sync) {
  double total = 0;
  int done = 0;
  while (done < calls) {
    const int n = std::min(batch, calls - done);
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) fn();
    total += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    sync();
    done += n;
  }
  return total / done;
}

struct LaunchRounds;

// Both sides' objects on one device; the destructor releases what was made.
class SameState {
 public:
  explicit SameState(const Options& o) : o_(o) {}
  ~SameState();
  SameState(const SameState&) = delete;
  SameState& operator=(const SameState&) = delete;

  // Initialises xal, loads the driver, makes both sides' objects. False
  // with *error on the first failure.
  bool open(std::string* error);

  // Interleaved rounds of launches of the empty kernel: raw, through xal,
  // through the plugin's table (no core), and cuCtxGetCurrent alone; each
  // round in another order. False when a call fails.
  bool time_launch(int rounds, LaunchRounds* out);

  // D2D copies on xal's memory, raw then xal, device- and host-timed.
  bool time_dtod(size_t bytes, Result* r, std::string* error);

 private:
  const Options& o_;
  DriverSymbols d_;
  bool xal_open_ = false;
  xal_device_t dev_ = nullptr;
  xal_devptr_t a_ = 0, b_ = 0;
  xal_stream_t xs_ = nullptr;
  xal_event_t xe_[2] = {nullptr, nullptr};
  xal_module_t xm_ = nullptr;
  xal_kernel_t x_empty_ = nullptr, x_spin_ = nullptr;
  xal_launch_config_t config_{};
  CUdevice cu_dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream rs_ = nullptr;
  CUevent re_[2] = {nullptr, nullptr};
  CUmodule rm_ = nullptr;
  CUfunction r_empty_ = nullptr, r_spin_ = nullptr;
};

bool SameState::open(std::string* error) {
  if (tools::init_xal() != XAL_SUCCESS) return *error = xal_error("xal_init"), false;
  xal_open_ = true;
  dev_ = tools::find_cuda_device(o_.device);
  if (dev_ == nullptr) return *error = "no CUDA device through xal", false;
  const size_t max_size = *std::max_element(o_.sizes.begin(), o_.sizes.end());
  if (xal_mem_alloc(dev_, max_size, &a_) != XAL_SUCCESS ||
      xal_mem_alloc(dev_, max_size, &b_) != XAL_SUCCESS ||
      xal_stream_create(dev_, XAL_STREAM_NON_BLOCKING, &xs_) != XAL_SUCCESS ||
      xal_event_create(dev_, XAL_EVENT_DEFAULT, &xe_[0]) != XAL_SUCCESS ||
      xal_event_create(dev_, XAL_EVENT_DEFAULT, &xe_[1]) != XAL_SUCCESS ||
      xal_module_load(dev_, XAL_MODULE_FORMAT_PTX, kBenchKernelsPtx,
                      sizeof kBenchKernelsPtx - 1, &xm_) != XAL_SUCCESS ||
      xal_kernel_get(xm_, "xal_empty", &x_empty_) != XAL_SUCCESS ||
      xal_kernel_get(xm_, "xal_bench_spin", &x_spin_) != XAL_SUCCESS) {
    return *error = xal_error("xal set-up"), false;
  }
  config_.struct_size = sizeof config_;
  config_.grid[0] = config_.grid[1] = config_.grid[2] = 1;
  config_.block[0] = config_.block[1] = config_.block[2] = 1;
  const char* path = std::getenv("XAL_CUDA_DRIVER");
  if (!d_.load(path != nullptr ? path : "libcuda.so.1", error)) return false;
  const char* failed = nullptr;
  auto call = [&failed](CUresult r, const char* name) {
    if (r != CUDA_SUCCESS && failed == nullptr) failed = name;
    return r == CUDA_SUCCESS;
  };
  // The primary context xal uses (retained once more), made current.
  (void)(call(d_.cuDeviceGet(&cu_dev_, o_.device), "cuDeviceGet") &&
         call(d_.cuDevicePrimaryCtxRetain(&ctx_, cu_dev_), "cuDevicePrimaryCtxRetain") &&
         call(d_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent") &&
         call(d_.cuStreamCreate(&rs_, CU_STREAM_NON_BLOCKING), "cuStreamCreate") &&
         call(d_.cuEventCreate(&re_[0], CU_EVENT_DEFAULT), "cuEventCreate") &&
         call(d_.cuEventCreate(&re_[1], CU_EVENT_DEFAULT), "cuEventCreate") &&
         call(d_.cuModuleLoadDataEx(&rm_, kBenchKernelsPtx, 0, nullptr, nullptr),
              "cuModuleLoadDataEx") &&
         call(d_.cuModuleGetFunction(&r_empty_, rm_, "xal_empty"), "cuModuleGetFunction") &&
         call(d_.cuModuleGetFunction(&r_spin_, rm_, "xal_bench_spin"), "cuModuleGetFunction"));
  if (failed != nullptr) *error = std::string("raw set-up: ") + failed + " failed";
  return failed == nullptr;
}

SameState::~SameState() {
  if (rm_ != nullptr) d_.cuModuleUnload(rm_);
  for (CUevent e : re_) {
    if (e != nullptr) d_.cuEventDestroy(e);
  }
  if (rs_ != nullptr) d_.cuStreamDestroy(rs_);
  if (ctx_ != nullptr) d_.cuDevicePrimaryCtxRelease(cu_dev_);
  if (!xal_open_) return;
  if (xm_ != nullptr) xal_module_unload(xm_);
  for (xal_event_t e : xe_) {
    if (e != nullptr) xal_event_destroy(e);
  }
  if (xs_ != nullptr) xal_stream_destroy(xs_);
  if (a_ != 0) xal_mem_free(dev_, a_);
  if (b_ != 0) xal_mem_free(dev_, b_);
  xal_shutdown();
}

// The per-call cost of each launch path, one entry per round.
struct LaunchRounds {
  std::vector<double> raw, via_xal, table, get;
};

double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 != 0 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool SameState::time_launch(int rounds, LaunchRounds* out) {
  bool ok = true;
  auto raw_sync = [&] { ok = ok && d_.cuStreamSynchronize(rs_) == CUDA_SUCCESS; };
  auto xal_sync = [&] { ok = ok && xal_stream_synchronize(xs_) == XAL_SUCCESS; };
  // The plugin's own entry, called through its table as the core does.
  const xal_backend_table_t* table = nullptr;
  void* native_stream = nullptr;
  void* native_kernel = nullptr;
  if (xal_handle_get_native(xs_, &table, &native_stream) != XAL_SUCCESS ||
      xal_handle_get_native(x_empty_, &table, &native_kernel) != XAL_SUCCESS) {
    return false;
  }
  auto* bstream = static_cast<xal_bstream_t*>(native_stream);
  auto* bkernel = static_cast<xal_bkernel_t*>(native_kernel);
  const std::function<void()> sides[] = {
      [&] {
        out->raw.push_back(us_per_call(o_.launches, o_.batch, [&] {
          ok = ok && d_.cuLaunchKernel(r_empty_, 1, 1, 1, 1, 1, 1, 0, rs_, nullptr,
                                       nullptr) == CUDA_SUCCESS;
        }, raw_sync));
      },
      [&] {
        out->via_xal.push_back(us_per_call(o_.launches, o_.batch, [&] {
          ok = ok && xal_kernel_launch(xs_, x_empty_, &config_, nullptr, 0) == XAL_SUCCESS;
        }, xal_sync));
      },
      [&] {
        out->table.push_back(us_per_call(o_.launches, o_.batch, [&] {
          ok = ok && table->kernel_launch(bstream, bkernel, &config_, nullptr, 0) ==
                         XAL_SUCCESS;
        }, xal_sync));
      },
      // What the plugin adds to each launch on the driver's side.
      [&] {
        out->get.push_back(us_per_call(o_.launches, o_.batch, [&] {
          CUcontext current = nullptr;
          ok = ok && d_.cuCtxGetCurrent(&current) == CUDA_SUCCESS;
        }, [] {}));
      },
  };
  constexpr int kSides = 4;
  // Each round starts with the next side, so that none is always first.
  for (int round = 0; round < rounds && ok; ++round) {
    for (int i = 0; i < kSides; ++i) sides[(round + i) % kSides]();
  }
  return ok && !out->raw.empty();
}

bool SameState::time_dtod(size_t bytes, Result* r, std::string* error) {
  const CopySide raw = raw_copy_side(d_, nullptr, a_, b_, rs_, r_spin_, re_, error);
  const CopySide via_xal = xal_copy_side(nullptr, a_, b_, xs_, x_spin_, xe_, error);
  // Raw first, then xal first.
  for (int turn = 0; turn < 4; ++turn) {
    const bool raw_turn = (turn == 0 || turn == 3);
    double host = 0, device = 0;
    if (!time_copies(o_, "dtod", bytes, raw_turn ? raw : via_xal, &host, &device, error)) {
      return false;
    }
    double& best_host = raw_turn ? r->raw_host_gbps : r->xal_host_gbps;
    double& best_device = raw_turn ? r->raw_gbps : r->xal_gbps;
    best_host = std::max(best_host, host);
    best_device = std::max(best_device, device);
  }
  return true;
}

}  // namespace

int run_same_state(const Options& o, std::vector<Result>* results, double* raw_us,
                   double* xal_us, std::string* error) {
  SameState state(o);
  if (!state.open(error)) return 1;
  LaunchRounds rounds;
  if (!state.time_launch(kLaunchRounds, &rounds)) {
    *error = "a launch failed while timing launches";
    return 1;
  }
  *raw_us = best(rounds.raw);
  *xal_us = best(rounds.via_xal);
  for (Result& r : *results) {
    if (r.direction != "dtod") continue;
    r.own_raw_gbps = r.raw_gbps;
    r.own_xal_gbps = r.xal_gbps;
    r.raw_gbps = r.xal_gbps = r.raw_host_gbps = r.xal_host_gbps = 0;
    if (!state.time_dtod(r.bytes, &r, error)) {
      *error = "dtod: " + *error;
      return 1;
    }
  }
  return 0;
}

int run_diagnose(const Options& o, std::string* error) {
  SameState state(o);
  if (!state.open(error)) return 1;
  LaunchRounds r;
  if (!state.time_launch(kLaunchRounds, &r)) {
    *error = "a launch failed while timing launches";
    return 1;
  }
  std::printf("one process state (xal initialised, the same context), %d interleaved "
              "rounds, us per call, best / median:\n",
              kLaunchRounds);
  std::printf("  launch raw              %.3f / %.3f\n", best(r.raw), median(r.raw));
  std::printf("  launch through xal      %.3f / %.3f (added %.3f / %.3f)\n", best(r.via_xal),
              median(r.via_xal), best(r.via_xal) - best(r.raw),
              median(r.via_xal) - median(r.raw));
  std::printf("  launch, plugin's table  %.3f / %.3f (added %.3f / %.3f)\n", best(r.table),
              median(r.table), best(r.table) - best(r.raw), median(r.table) - median(r.raw));
  std::printf("  cuCtxGetCurrent         %.3f / %.3f\n", best(r.get), median(r.get));
  for (size_t bytes : o.sizes) {
    Result r{"dtod", bytes};
    if (!state.time_dtod(bytes, &r, error)) return 1;
    std::printf("  dtod %10zu on xal's memory: device-timed raw %.2f xal %.2f GB/s (%.4f); "
                "host-timed raw %.2f xal %.2f (%.4f)\n",
                bytes, r.raw_gbps, r.xal_gbps, r.raw_gbps > 0 ? r.xal_gbps / r.raw_gbps : 0,
                r.raw_host_gbps, r.xal_host_gbps,
                r.raw_host_gbps > 0 ? r.xal_host_gbps / r.raw_host_gbps : 0);
  }
  return 0;
}

}  // namespace xal::cuda::rawbench
