// Runs a command as a child process with extra environment and a time
// limit (through xal_common/child_process.hpp), and says how it ended.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "xal_common/child_process.hpp"

namespace xal::faulttool {

// How a command ended: the tools' common outcome (started, start_error,
// wait_error, exit_code, signal, timed_out, stopped_by, stop_signal: the
// signal xal-fault got, passed on to the command's group, or the Ctrl-C
// that reached the command at the terminal; xal-fault then stops too, with
// status 128 + the signal; seconds).
using Outcome = xal::common::ChildOutcome;

// For main, before anything else: SIGCHLD back to its default (started with
// it ignored, xal-fault would not see its children end), and SIGINT, SIGTERM
// and SIGHUP caught for run_command (see Outcome::stop_signal).
void install_signal_handlers();

// Runs `argv` with `env` added to (and overriding) the environment, in its
// own process group; kills that group after `timeout_s` seconds (0: no
// limit). stdout and stderr are inherited unless `quiet`, then they go to
// /dev/null. When stdin is the terminal and xal-fault its foreground, the
// command's group gets the terminal while it runs (it can read it, Ctrl-C
// and Ctrl-Z reach it; Ctrl-Z stops xal-fault with it). Leftover processes
// of the group are killed when it ends. Not thread-safe (waitpid, signals).
Outcome run_command(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env,
                    double timeout_s, bool quiet);

// "exit 0", "signal 6 (SIGABRT)", "timed out after 5 s", ...
std::string describe(const Outcome& o, double timeout_s);
// The shell-like status: exit code, 128+signal, 124 for a time-out; 2 when
// how it ended is unknown (wait_error).
int shell_status(const Outcome& o);

// "SIGTERM" (or "signal N").
std::string signal_name(int signal);

}  // namespace xal::faulttool
