// The two subcommands of xal-fault.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace xal::faulttool {

struct CommonOptions {
  std::string plan;
  std::string faults;
  std::string target;
  std::optional<uint64_t> seed;
  double timeout_s = 60.0;
  bool json = false;
  bool quiet = false;
  std::vector<std::string> command;
};

struct RunOptions {
  CommonOptions common;
  std::string log;
};

struct SweepOptions {
  CommonOptions common;
  std::string op;
  std::string error;
  uint32_t max_runs = 1000;
  bool strict = false;
  bool verbose = false;
};

// Each returns the process exit status of xal-fault; bad options exit 2.
int command_run(const RunOptions& options);
int command_sweep(const SweepOptions& options);

// Checks the plan and rules (throws std::runtime_error with the parser's
// message) and builds the environment of a run.
std::map<std::string, std::string> run_environment(const CommonOptions& o,
                                                   const std::string& faults,
                                                   const std::string& log);

// A fresh temporary log path (the file does not exist yet).
std::string temp_log_path(const std::string& tag);

}  // namespace xal::faulttool
