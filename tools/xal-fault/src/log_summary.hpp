// Reads an injection log (XAL_FAULT_LOG) and counts what fired.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xal::faulttool {

struct RuleSummary {
  uint64_t fired = 0;
  std::map<std::string, uint64_t> operations;  // operation -> count
  std::map<std::string, uint64_t> actions;     // "error XAL_ERROR_TIMEOUT" -> n
};

struct LogSummary {
  // The file exists: a fault backend opened it, at its start (or to say
  // why it could not start).
  bool found = false;
  // The reasons of the {"event":"start_failed"} lines: fault backends that
  // did not start and injected nothing.
  std::vector<std::string> start_failures;
  uint64_t injections = 0;
  uint64_t bad_lines = 0;                   // lines that are not JSON
  std::map<std::string, RuleSummary> rules; // by rule name
};

// A missing file reads as an empty log.
LogSummary summarize_log(const std::string& path);

}  // namespace xal::faulttool
