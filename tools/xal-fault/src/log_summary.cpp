#include "log_summary.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

namespace xal::faulttool {

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
        s.start_failures.push_back(j.value("reason", std::string("(no reason given)")));
      }
      continue;
    }
    ++s.injections;
    auto& r = s.rules[j.value("rule", std::string("?"))];
    ++r.fired;
    ++r.operations[j.value("operation", std::string("?"))];
    std::string what = j.value("action", std::string("?"));
    const std::string status = j.value("status", std::string());
    if (!status.empty() && status != "XAL_SUCCESS") what += " " + status;
    ++r.actions[what];
  }
  return s;
}

}  // namespace xal::faulttool
