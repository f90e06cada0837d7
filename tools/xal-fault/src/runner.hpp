// Runs a command as a child process with extra environment and a time
// limit, and says how it ended.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace xal::faulttool {

struct Outcome {
  bool started = false;
  std::string start_error;  // why the command could not be started
  int exit_code = -1;       // when it exited
  int signal = 0;           // when a signal killed it
  bool timed_out = false;   // killed at the time limit
  double seconds = 0.0;
};

// Runs `argv` with `env` added to (and overriding) the environment; kills
// its process group after `timeout_s` seconds (0: no limit). stdout and
// stderr are inherited unless `quiet`, then they go to /dev/null.
Outcome run_command(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env,
                    double timeout_s, bool quiet);

// "exit 0", "signal 6 (SIGABRT)", "timed out after 5 s", ...
std::string describe(const Outcome& o, double timeout_s);
// The shell-like status: exit code, 128+signal, 124 for a time-out.
int shell_status(const Outcome& o);

}  // namespace xal::faulttool
