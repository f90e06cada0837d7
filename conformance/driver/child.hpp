// Runs the suite as a child process (its own process group), with extra
// environment, output to a file, a time limit and a callback while it runs:
// xal-conform's use of the tools' runner (xal_common/child_process.hpp).
#pragma once

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace conform_driver {

struct ChildResult {
  bool started = false;
  std::string start_error;  // why it could not start
  int exit_code = -1;       // when it exited
  int signal = 0;           // when a signal killed it
  bool timed_out = false;   // killed by us after the time limit
  std::string wait_error;   // waitpid failed: how it ended is unknown
};

// For main, before any child: SIGCHLD back to its default (started with it
// ignored, the driver would not see its children end), and SIGINT, SIGTERM
// and SIGHUP caught: run_child then ends its child and throws Stopped, so
// that main can clean up and exit with 128 + the signal.
void install_signal_handlers();

// xal-conform got a stop signal (see install_signal_handlers).
struct Stopped : std::runtime_error {
  explicit Stopped(int sig);
  int signal;
};

// Throws Stopped when a stop signal came.
void throw_if_stopped();

// Runs argv[0] (a path) with `argv`, the current environment plus `env`,
// stdout and stderr appended to `log_path`. `poll` runs about every 50 ms
// while the child lives; when it returns true, or after `timeout_s`, the
// child's process group is killed with SIGKILL and timed_out is set. When
// `poll` throws, or a stop signal comes (it throws Stopped), the process
// group is killed and the child reaped before the exception leaves. Not
// thread-safe (uses waitpid on its own child).
ChildResult run_child(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& env,
                      const std::string& log_path, double timeout_s,
                      const std::function<bool()>& poll);

// "SIGSEGV (Segmentation fault)".
std::string signal_text(int signal);

// The last `max_bytes` of a file, for messages, from the start of a UTF-8
// character (a cut one is left out).
std::string file_tail(const std::string& path, size_t max_bytes);

}  // namespace conform_driver
