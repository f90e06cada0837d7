// The JSON report and JUnit XML of a run.
#pragma once

#include <string>
#include <vector>

#include "model.hpp"

namespace conform_driver {

struct ReportContext {
  std::string mode;  // "quick" or "full"
  std::vector<std::string> groups;
  std::vector<std::string> command;
  std::string known_failures_file;
  bool fail_on_unexpected_pass = false;
  // Groups not run yet when the report is written while the run goes on
  // (the report then says "complete": false); empty at the end.
  std::vector<std::string> groups_not_run;
};

// Counts of outcomes.
struct Counts {
  size_t total = 0, passed = 0, failed = 0, unsupported = 0, known_failure = 0,
         unexpected_pass = 0;
  void add(const std::string& outcome);
};

Counts count(const RunResult& run);
// Whether the run failed (failures, or unexpected passes when asked).
bool run_failed(const RunResult& run, const ReportContext& context);

// The JSON report as text. Every test with its outcome and message, every
// figure, the platform and a summary.
std::string json_report(const Platform& platform, const RunResult& run,
                        const ReportContext& context);

// JUnit XML: one testsuite per group.
std::string junit_report(const RunResult& run);

// Checks that `path` can be written, and the temporary file beside it that
// write_file uses (creating each if needed, removing it again if it did not
// exist). Returns an error message or "".
std::string check_writable(const std::string& path);

// Writes `text` to `path` (atomically: a temporary file renamed over it;
// through a symbolic link, which stays); returns an error message or "".
std::string write_file(const std::string& path, const std::string& text);

// `path` with its symbolic links followed to the file they name (existing
// or not).
std::string final_path(const std::string& path);

// `text` for XML text and attributes: markup characters escaped, control
// characters XML forbids as '?', bytes that are not UTF-8 as U+FFFD.
std::string xml_escape(const std::string& text);

}  // namespace conform_driver
