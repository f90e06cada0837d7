// Summary table (see summary.hpp).
#include "summary.hpp"

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inventory.hpp"

namespace conform_driver {
namespace {

// The first `lines` lines of a message, each cut at `max` characters and
// indented for the table.
std::string first_lines(const std::string& text, size_t lines, size_t max) {
  std::string out;
  size_t start = 0;
  for (size_t n = 0; n < lines && start < text.size(); ++n) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (line.size() > max) line = line.substr(0, max - 3) + "...";
    out += (n == 0 ? "" : "\n      ") + line;
    start = end + 1;
  }
  return out;
}

}  // namespace

void print_summary(std::FILE* out, const Platform& platform, const RunResult& run,
                   const ReportContext& context) {
  const Counts all = count(run);
  std::fprintf(out,
               "\nxal-conform (%s, %.1f s): %zu tests, %zu passed, %zu failed, %zu "
               "unsupported, %zu known failures, %zu unexpected passes\n\n",
               context.mode.c_str(), run.duration_s, all.total, all.passed, all.failed,
               all.unsupported, all.known_failure, all.unexpected_pass);
  // device label -> group -> counts; device -1 is "(no device)".
  std::map<int, std::map<std::string, Counts>> table;
  for (const TestResult& t : run.tests) {
    table[t.devices.empty() ? -1 : t.devices.front()][t.group].add(t.outcome);
  }
  std::map<int, std::string> labels;
  labels[-1] = "(no device)";
  for (const DeviceEntry& d : platform.devices) labels[static_cast<int>(d.index)] = device_label(d);
  std::fprintf(out, "%-44s %-16s %6s %6s %6s %6s %6s\n", "device", "group", "passed",
               "failed", "unsup", "known", "unexp");
  for (const auto& [device, groups] : table) {
    bool first = true;
    for (const std::string& g : context.groups) {
      const auto it = groups.find(g);
      if (it == groups.end()) continue;
      const Counts& c = it->second;
      std::string label = first ? labels[device] : "";
      if (label.size() > 44) label = label.substr(0, 41) + "...";
      std::fprintf(out, "%-44s %-16s %6zu %6zu %6zu %6zu %6zu\n", label.c_str(), g.c_str(),
                   c.passed, c.failed, c.unsupported, c.known_failure, c.unexpected_pass);
      first = false;
    }
  }
  // Parity: figures named "<direction>.<size>MiB.<metric>".
  // A figure the suite gave no finite number for shows as "n/a".
  using Cell = std::pair<std::optional<double>, std::optional<double>>;
  std::map<int, std::map<std::string, std::map<int, Cell>>> parity;
  for (const Figure& f : run.figures) {
    if (group_of(f.test) != "parity") continue;
    const size_t a = f.name.find('.');
    const size_t b = f.name.rfind('.');
    if (a == std::string::npos || a == b) continue;
    const std::string dir = f.name.substr(0, a), size = f.name.substr(a + 1, b - a - 1),
                      metric = f.name.substr(b + 1);
    auto& cell = parity[f.device][dir][std::atoi(size.c_str())];
    if (metric == "ratio") cell.first = f.value;
    if (metric == "abi_gbps") cell.second = f.value;
  }
  if (!parity.empty()) {
    std::fprintf(out, "\nparity: through xal / direct (GB/s through xal)%s\n",
                 context.mode == "quick" ? ", targets reported only in quick mode" : "");
    for (const auto& [device, dirs] : parity) {
      std::fprintf(out, "%s\n", labels.count(device) ? labels[device].c_str() : "?");
      for (const auto& [dir, sizes] : dirs) {
        std::string line = "    " + dir + ":";
        for (const auto& [size, cell] : sizes) {
          char ratio[32] = "n/a", gbps[32] = "n/a", piece[96];
          if (cell.first) std::snprintf(ratio, sizeof(ratio), "%.3f", *cell.first);
          if (cell.second) std::snprintf(gbps, sizeof(gbps), "%.2f", *cell.second);
          std::snprintf(piece, sizeof(piece), "  %dMiB %s (%s GB/s)", size, ratio, gbps);
          line += piece;
        }
        std::fprintf(out, "%s\n", line.c_str());
      }
    }
  }
  bool header = false;
  for (const TestResult& t : run.tests) {
    if (t.outcome != kFailed && t.outcome != kUnexpectedPass) continue;
    if (!header) std::fprintf(out, "\nproblems:\n");
    header = true;
    std::fprintf(out, "  %-15s %s\n      %s\n", t.outcome.c_str(), t.name.c_str(),
                 first_lines(t.outcome == kFailed ? t.message : t.known_failure_reason, 3, 200).c_str());
  }
  std::fprintf(out, "\nresult: %s\n", run_failed(run, context) ? "FAILED" : "PASSED");
}

}  // namespace conform_driver
