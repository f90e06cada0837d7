// bench_common.cpp -- sizes, and the report of xal-cuda-rawbench.
#include "bench_common.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "xal_common/strings.hpp"

namespace xal::cuda::rawbench {

bool parse_sizes(const std::vector<std::string>& text, std::vector<size_t>* out,
                 std::string* error) {
  out->clear();
  for (const std::string& item : text) {
    std::string why;
    const auto bytes = common::parse_bytes(item, &why);
    if (!bytes || *bytes == 0) {
      *error = "bad size '" + item + "'" + (why.empty() ? "" : ": " + why);
      return false;
    }
    out->push_back(static_cast<size_t>(*bytes));
  }
  if (out->empty()) {
    *error = "no sizes given";
    return false;
  }
  return true;
}

bool time_copies(const Options& options, const std::string& direction, size_t bytes,
                 const CopySide& side, double* host_gbps, double* device_gbps,
                 std::string* error) {
  using Clock = std::chrono::steady_clock;
  constexpr uint64_t kMaxGateNs = 1'000'000'000;
  const int iterations = iterations_for(options, bytes);
  const int queued = std::min(iterations, kMaxQueuedCopies);
  auto copies = [&](int n) {
    for (int i = 0; i < n; ++i) {
      if (!side.copy(direction, bytes)) return false;
    }
    return true;
  };
  *host_gbps = *device_gbps = 0;
  // trial -1 is a warm-up, not timed.
  for (int trial = -1; trial < options.trials; ++trial) {
    const auto t0 = Clock::now();
    if (!copies(trial < 0 ? 1 : iterations) || !side.synchronize()) return false;
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (trial >= 0) *host_gbps = std::max(*host_gbps, double(bytes) * iterations / s / 1e9);
  }
  uint64_t gate_ns = static_cast<uint64_t>(options.gate_us) * 1000;
  for (int trial = -1; trial < options.trials; ++trial) {
    for (;;) {
      if (!side.gate(gate_ns) || !side.record(true) || !copies(queued) ||
          !side.record(false)) {
        return false;
      }
      const int opened = side.query_start();
      if (opened < 0 || !side.synchronize()) return false;
      if (opened == 0) break;
      if (gate_ns >= kMaxGateNs) {
        *error = "the gate kernel ended before " + std::to_string(queued) +
                 " copies were queued, even spinning " + std::to_string(gate_ns / 1'000'000) +
                 " ms";
        return false;
      }
      gate_ns *= 2;
    }
    float ms = 0;
    if (!side.elapsed_ms(&ms)) return false;
    if (trial >= 0 && ms > 0) {
      *device_gbps = std::max(*device_gbps, double(bytes) * queued / (ms / 1e3) / 1e9);
    }
  }
  return true;
}

namespace {

std::string report_path(const std::string& out_dir) { return out_dir + "/raw_vs_xal.json"; }

}  // namespace

bool prepare_out_dir(const std::string& out_dir, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    *error = "cannot create the folder " + out_dir + ": " + ec.message();
    return false;
  }
  const std::string path = report_path(out_dir);
  const bool existed = ::access(path.c_str(), F_OK) == 0;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  ::close(fd);
  if (!existed) ::unlink(path.c_str());
  return true;
}

bool report(const std::string& out_dir, const Options& options,
            const std::vector<Result>& results, double raw_launch_us,
            double xal_launch_us, std::string* error) {
  constexpr double kCopyTarget = 0.98;
  constexpr double kLaunchTargetUs = 0.2;
  constexpr size_t kFrom = size_t{1} << 20;
  nlohmann::json doc;
  doc["device"] = options.device;
  doc["iterations"] = options.iterations;
  doc["trials"] = options.trials;
  doc["gate_us"] = options.gate_us;
  doc["timing"] = "ratio: device-timed (events around copies queued behind a spin kernel); "
                  "host_ratio: host clock from the first enqueue to the stream synchronize";
  doc["baseline"] = "htod/dtoh: raw copies from malloc'ed pages registered with "
                    "cuMemHostRegister, the page-locked memory xal_host_alloc makes (judged); "
                    "ratio_vs_host_alloc: against raw copies from cuMemHostAlloc memory "
                    "(shown, not judged); dtod: raw cuMemcpyDtoDAsync on xal's memory, "
                    "interleaved with xal in one process state (judged); own_*: each side "
                    "in its own set-up with its own buffers (shown, not judged)";
  bool ok = true;
  std::printf("raw CUDA against xal (targets: copies >= %.2f from 1 MiB, launch <= +%.1f us;\n"
              "H2D/D2H judged against raw copies from registered pages, as xal_host_alloc's;\n"
              "D2D and launch: raw and xal interleaved in one process state, same memory):\n",
              kCopyTarget, kLaunchTargetUs);
  std::printf("device-timed (events around a gated batch; checked), then host-timed "
              "(enqueue to synchronize).\n"
              "baseline: H2D/D2H raw from pages registered with cuMemHostRegister (the "
              "page-locked memory\nxal_host_alloc makes), judged against the 0.98 target; "
              "D2D raw on xal's memory, interleaved\nwith xal in one process state. \"vs "
              "alloc\": xal against raw from cuMemHostAlloc memory, shown, not judged.\n");
  std::printf("%-5s %10s %9s %9s %7s %10s %8s %9s %9s %7s\n", "dir", "bytes", "baseline",
              "xal GB/s", "ratio", "raw alloc", "vs alloc", "raw host", "xal host", "ratio");
  for (const Result& r : results) {
    const double base = r.baseline_gbps();
    const double ratio = base > 0 ? r.xal_gbps / base : 0;
    const double vs_alloc = r.host_copy() && r.raw_gbps > 0 ? r.xal_gbps / r.raw_gbps : 0;
    const double base_host = r.baseline_host_gbps();
    const double host_ratio = base_host > 0 ? r.xal_host_gbps / base_host : 0;
    const bool checked = r.bytes >= kFrom;
    const bool pass = !checked || ratio >= kCopyTarget;
    ok = ok && pass;
    char alloc[32] = "-", alloc_ratio[32] = "-";
    if (r.host_copy()) {
      std::snprintf(alloc, sizeof alloc, "%.2f", r.raw_gbps);
      std::snprintf(alloc_ratio, sizeof alloc_ratio, "%.4f", vs_alloc);
    }
    std::printf("%-5s %10zu %9.2f %9.2f %7.4f %10s %8s %9.2f %9.2f %7.4f%s\n", r.direction.c_str(),
                r.bytes, base, r.xal_gbps, ratio, alloc, alloc_ratio, base_host,
                r.xal_host_gbps, host_ratio, pass ? "" : "  below target 0.98");
    doc["copies"].push_back({{"direction", r.direction},
                             {"bytes", r.bytes},
                             {"baseline", r.host_copy() ? "cuMemHostRegister pages" : "raw"},
                             {"baseline_gbps", base},
                             {"xal_gbps", r.xal_gbps},
                             {"ratio", ratio},
                             {"raw_gbps", r.raw_gbps},
                             {"raw_registered_gbps", r.raw_registered_gbps},
                             {"ratio_vs_host_alloc", vs_alloc},
                             {"raw_host_gbps", r.raw_host_gbps},
                             {"raw_registered_host_gbps", r.raw_registered_host_gbps},
                             {"xal_host_gbps", r.xal_host_gbps},
                             {"host_ratio", host_ratio},
                             {"own_raw_gbps", r.own_raw_gbps},
                             {"own_xal_gbps", r.own_xal_gbps},
                             {"target", checked ? kCopyTarget : 0.0},
                             {"pass", pass}});
  }
  bool own_header = false;
  for (const Result& r : results) {
    if (r.host_copy() || r.own_raw_gbps <= 0) continue;
    if (!own_header) {
      std::printf("D2D, each side in its own set-up with its own buffers (shown, not judged):\n");
      own_header = true;
    }
    std::printf("dtod  %10zu raw %9.2f xal %9.2f GB/s  ratio %7.4f\n", r.bytes, r.own_raw_gbps,
                r.own_xal_gbps, r.own_xal_gbps / r.own_raw_gbps);
  }
  const double added = xal_launch_us - raw_launch_us;
  const bool launch_ok = added <= kLaunchTargetUs;
  ok = ok && launch_ok;
  std::printf("launch (raw and xal interleaved in one process state, best of %d rounds): "
              "raw %.3f us, xal %.3f us, added %.3f us%s\n",
              kLaunchRounds,
              raw_launch_us, xal_launch_us, added,
              launch_ok ? "" : "  above target 0.2 us");
  doc["launch"] = {{"raw_us", raw_launch_us},
                   {"xal_us", xal_launch_us},
                   {"added_us", added},
                   {"target_added_us", kLaunchTargetUs},
                   {"timing", "host time per call, raw and xal interleaved in one process "
                              "state (xal initialised, the same context), best round of " +
                                  std::to_string(kLaunchRounds) + " each"},
                   {"pass", launch_ok}};
  doc["all_targets_met"] = ok;
  const std::string path = report_path(out_dir);
  std::ofstream file(path);
  file << doc.dump(2) << "\n";
  if (!file) *error = "cannot write " + path;
  return ok;
}

}  // namespace xal::cuda::rawbench
