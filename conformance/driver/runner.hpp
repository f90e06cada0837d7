// Runs the suite: lists its tests, then runs each group in a child process
// and merges the results. A test that kills its process (a signal) or
// hangs past the time limit is reported failed and the rest of its group
// runs in a fresh process.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model.hpp"

namespace conform_driver {

struct RunnerOptions {
  std::string suite_path;
  std::map<std::string, std::string> env;  // XAL_CONFORM_* for the suite
  std::string work_dir;                    // temporary files
  double test_timeout_s = 300;             // one test, then it is killed
  double group_timeout_s = 7200;           // one group's process (group_time_limit)
  bool progress_tty = false;               // rewrite one line in place
  bool verbose = false;                    // copy the suite's output to stderr
  bool fail_fast = false;                  // stop at the first failed test
  // Run exactly the tests of the list given to run_groups (a list narrowed
  // to one test), not whole groups by pattern.
  bool listed_tests_only = false;
  // Called after each group with the results so far and how many groups
  // have run (a report written as the run goes, so that a run killed from
  // outside still leaves one). Optional.
  std::function<void(const RunResult&, size_t groups_done)> after_group;
};

// The time limit of one group's suite process: 2 hours, or the limit of one
// test plus 10 minutes when that is longer (so that it never cuts a test
// short of its own limit in a process of its own).
inline constexpr double kGroupTimeLimitS = 7200;
inline constexpr double kGroupTimeMarginS = 600;
double group_time_limit(double test_timeout_s);

struct TestList {
  std::vector<std::string> groups;                    // in run order
  std::map<std::string, std::vector<std::string>> tests;  // group -> names
  std::string error;                                  // listing failed
};

// Lists the suite's tests (--gtest_list_tests) in the suite's environment.
TestList list_tests(const RunnerOptions& options);

// Runs `groups` of `list`. `device_names` maps a device index to a label
// for the progress line.
RunResult run_groups(const RunnerOptions& options, const TestList& list,
                     const std::vector<std::string>& groups,
                     const std::map<int, std::string>& device_names);

}  // namespace conform_driver
