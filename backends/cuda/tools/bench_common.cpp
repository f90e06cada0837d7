// bench_common.cpp -- sizes, and the report of xal-cuda-rawbench.
#include "bench_common.h"

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
  bool ok = true;
  std::printf("%-5s %12s %12s %12s %7s\n", "dir", "bytes", "raw GB/s",
              "xal GB/s", "ratio");
  for (const Result& r : results) {
    const double ratio = r.raw_gbps > 0 ? r.xal_gbps / r.raw_gbps : 0;
    const bool checked = r.bytes >= kFrom;
    const bool pass = !checked || ratio >= kCopyTarget;
    ok = ok && pass;
    std::printf("%-5s %12zu %12.2f %12.2f %7.4f%s\n", r.direction.c_str(),
                r.bytes, r.raw_gbps, r.xal_gbps, ratio,
                pass ? "" : "  below target 0.98");
    doc["copies"].push_back({{"direction", r.direction},
                             {"bytes", r.bytes},
                             {"raw_gbps", r.raw_gbps},
                             {"xal_gbps", r.xal_gbps},
                             {"ratio", ratio},
                             {"target", checked ? kCopyTarget : 0.0},
                             {"pass", pass}});
  }
  const double added = xal_launch_us - raw_launch_us;
  const bool launch_ok = added <= kLaunchTargetUs;
  ok = ok && launch_ok;
  std::printf("launch: raw %.3f us, xal %.3f us, added %.3f us%s\n",
              raw_launch_us, xal_launch_us, added,
              launch_ok ? "" : "  above target 0.2 us");
  doc["launch"] = {{"raw_us", raw_launch_us},
                   {"xal_us", xal_launch_us},
                   {"added_us", added},
                   {"target_added_us", kLaunchTargetUs},
                   {"pass", launch_ok}};
  doc["all_targets_met"] = ok;
  const std::string path = out_dir + "/raw_vs_xal.json";
  std::ofstream file(path);
  file << doc.dump(2) << "\n";
  if (!file) *error = "cannot write " + path;
  return ok;
}

}  // namespace xal::cuda::rawbench
