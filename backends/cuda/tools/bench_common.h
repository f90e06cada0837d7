// bench_common.h -- shared parts of xal-cuda-rawbench: options, results,
// the report against the targets (copies >= 0.98 of raw from 1 MiB, launch <= +0.2 us).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace xal::cuda::rawbench {

// An empty kernel, for the launch cost.
inline constexpr char kEmptyKernelPtx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry xal_empty()\n{\n\tret;\n}\n";

struct Options {
  int device = 0;
  int iterations = 20;
  int trials = 5;
  int launches = 20000;
  int batch = 256;
  std::vector<size_t> sizes;
};

struct Result {
  std::string direction;  // htod, dtoh, dtod
  size_t bytes = 0;
  double raw_gbps = 0;
  double xal_gbps = 0;
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

// Parses "1MiB"-style sizes; false with *error on a malformed one.
bool parse_sizes(const std::vector<std::string>& text, std::vector<size_t>* out,
                 std::string* error);

// Prints a table, writes <out_dir>/raw_vs_xal.json. Returns true when every
// target is met; sets *error when the file cannot be written.
bool report(const std::string& out_dir, const Options& options,
            const std::vector<Result>& results, double raw_launch_us,
            double xal_launch_us, std::string* error);

}  // namespace xal::cuda::rawbench
