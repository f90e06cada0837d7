// bench_common.h -- shared parts of xal-cuda-rawbench: options, results, the
// copy timing both sides run, the report against the targets (copies >= 0.98
// of raw from 1 MiB, launch <= +0.2 us).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace xal::cuda::rawbench {

// The kernels both sides load: an empty one, for the launch cost, and a
// gate that spins on the GPU's nanosecond timer for `ns`, so that a batch of
// copies is queued behind it and then runs back to back, timed by events
// (as nvbandwidth times copies behind a blocking kernel).
inline constexpr char kBenchKernelsPtx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry xal_empty()\n{\n\tret;\n}\n"
    ".visible .entry xal_bench_spin(.param .u64 ns)\n{\n"
    "\t.reg .pred %p;\n\t.reg .b64 %rd<5>;\n"
    "\tld.param.u64 %rd1, [ns];\n\tmov.u64 %rd2, %globaltimer;\n"
    "SPIN:\n\tmov.u64 %rd3, %globaltimer;\n\tsub.u64 %rd4, %rd3, %rd2;\n"
    "\tsetp.lt.u64 %p, %rd4, %rd1;\n\t@%p bra SPIN;\n\tret;\n}\n";

struct Options {
  int device = 0;
  int iterations = 20;
  int trials = 5;
  int launches = 20000;
  int batch = 256;
  int gate_us = 5000;
  std::vector<size_t> sizes;
};

// One copy figure. The gbps fields are device-timed (events around a gated
// batch: the copies' own bandwidth, checked against the targets); the
// host_gbps fields host-timed (first enqueue to stream synchronize: what a
// caller that waits sees, call costs included). raw_*: the driver API with
// cuMemHostAlloc memory (H2D/D2H; D2D: device memory alone);
// raw_registered_*: raw again, H2D/D2H only, from malloc'ed pages
// registered with cuMemHostRegister, which is how xal_host_alloc makes its
// page-locked memory: the baseline the H2D/D2H target is judged against
// (baseline_gbps()), so that the ratio is xal's own cost on the same kind
// of page-locked memory. The ratio to cuMemHostAlloc memory is reported
// beside it, not judged.
struct Result {
  std::string direction;  // htod, dtoh, dtod
  size_t bytes = 0;
  double raw_gbps = 0;
  double xal_gbps = 0;
  double raw_host_gbps = 0;
  double xal_host_gbps = 0;
  double raw_registered_gbps = 0;
  double raw_registered_host_gbps = 0;
  // D2D only: raw_* and xal_* are timed in one process state on xal's
  // memory (same_state.cpp, judged); these in each side's own set-up, with
  // its own buffers (shown, not judged: at 1-4 MiB they moved by 3 % from
  // run to run on an H200 with the same code).
  double own_raw_gbps = 0;
  double own_xal_gbps = 0;

  bool host_copy() const { return direction != "dtod"; }
  // What the target is judged against: registered pages for H2D/D2H.
  double baseline_gbps() const { return host_copy() ? raw_registered_gbps : raw_gbps; }
  double baseline_host_gbps() const {
    return host_copy() ? raw_registered_host_gbps : raw_host_gbps;
  }
};

// What a side (the driver API, or xal) does for time_copies(). Each
// returns false with its error set; query_start gives 1 when the start
// event has completed, 0 when not.
struct CopySide {
  std::function<bool(const std::string& direction, size_t bytes)> copy;
  std::function<bool()> synchronize;
  std::function<bool(uint64_t ns)> gate;         // the spin kernel
  std::function<bool(bool start)> record;        // the start or end event
  std::function<int()> query_start;              // -1 on error
  std::function<bool(float* ms)> elapsed_ms;     // start to end
};

// Copies per timed trial for `bytes`: at least options.iterations, and
// enough to move 64 MiB, so that the host-clock timing (enqueue, then one
// stream synchronize) of small copies is not dominated by the synchronize.
// Both sides use it, so raw and xal time the same work.
inline int iterations_for(const Options& options, size_t bytes) {
  constexpr size_t kMinBytesPerTrial = size_t{64} << 20;
  const size_t needed = (kMinBytesPerTrial + bytes - 1) / bytes;
  return static_cast<int>(std::max<size_t>(
      static_cast<size_t>(options.iterations), std::min<size_t>(needed, 4096)));
}

// Copies queued behind one gate at most: a stream's queue is bounded, and
// a full one would block the host until the gate opens.
inline constexpr int kMaxQueuedCopies = 256;

// Times `direction` copies of `bytes` on `side`, the best of
// options.trials after a warm-up: host-timed into *host_gbps
// (iterations_for() copies), and device-timed into *device_gbps: the gate
// kernel, the start event, the copies (kMaxQueuedCopies at most), the end
// event; a gate that opened before the last copy was queued is lengthened
// (doubled while under 1 s) and the batch repeated. False with *error when a
// call fails or the gate cannot be made long enough.
bool time_copies(const Options& options, const std::string& direction, size_t bytes,
                 const CopySide& side, double* host_gbps, double* device_gbps,
                 std::string* error);

// Rounds of the launch timing (same_state.cpp), each side's best kept.
inline constexpr int kLaunchRounds = 10;

// The xal side of the copies (xal_side.cpp): xal initialised alone, the
// same work as the raw side; fills the xal_* fields of *results.
int run_xal(const Options& options, std::vector<Result>* results, std::string* error);

// What is judged in one process state (same_state.cpp): the launch cost,
// raw cuLaunchKernel against xal_kernel_launch (kLaunchRounds interleaved
// rounds of options.launches calls each, the best round of each side), and
// the D2D copies of *results, raw and xal on xal's memory in alternating
// order (the figures of each side's own set-up move to own_*_gbps).
int run_same_state(const Options& options, std::vector<Result>* results, double* raw_us,
                   double* xal_us, std::string* error);

// --diagnose: launches, cuCtxGetCurrent and D2D copies on xal's memory,
// raw and xal interleaved in one process state, printed (same_state.cpp).
int run_diagnose(const Options& options, std::string* error);

// Parses "1MiB"-style sizes; false with *error on a malformed one.
bool parse_sizes(const std::vector<std::string>& text, std::vector<size_t>* out,
                 std::string* error);

// Creates `out_dir` (and its parents) when missing and checks that
// <out_dir>/raw_vs_xal.json can be written there, leaving no file behind
// that was not there; false with *error otherwise. Run it before measuring.
bool prepare_out_dir(const std::string& out_dir, std::string* error);

// Prints a table, writes <out_dir>/raw_vs_xal.json. Each copy's ratio is
// xal / Result::baseline_gbps() (H2D/D2H: raw from registered pages), the
// one judged against 0.98 from 1 MiB; ratio_vs_host_alloc (xal / raw from
// cuMemHostAlloc memory) is shown beside it. Returns true when every target
// is met; sets *error when the file cannot be written.
bool report(const std::string& out_dir, const Options& options,
            const std::vector<Result>& results, double raw_launch_us,
            double xal_launch_us, std::string* error);

}  // namespace xal::cuda::rawbench
