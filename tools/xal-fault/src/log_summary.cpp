#include "log_summary.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

namespace xal::faulttool {
namespace {

// The string `key` of a log line, or `fallback` when it is absent or not a
// string (a damaged line must not stop the summary).
std::string text(const nlohmann::json& j, const char* key, const char* fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace

LogSummary summarize_log(const std::string& path) {
  LogSummary s;
  std::ifstream in(path);
  s.found = in.is_open();
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++s.bad_lines;
      continue;
    }
    if (j.contains("event")) {
      if (j["event"] == "start_failed") {
        s.start_failures.push_back(text(j, "reason", "(no reason given)"));
      }
      continue;
    }
    ++s.injections;
    auto& r = s.rules[text(j, "rule", "?")];
    ++r.fired;
    ++r.operations[text(j, "operation", "?")];
    std::string what = text(j, "action", "?");
    const std::string status = text(j, "status", "");
    if (!status.empty() && status != "XAL_SUCCESS") what += " " + status;
    ++r.actions[what];
  }
  return s;
}

}  // namespace xal::faulttool
