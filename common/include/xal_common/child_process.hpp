// child_process.hpp -- the one child-process runner of the tools that run a
// program under their watch (xal-conform runs its suite, xal-fault the
// user's command): its own process group, extra environment, where its
// output goes, a time limit, a callback while it runs, the terminal lent
// to it, and the tool's stop signals passed on or acted on.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace xal::common {

// What to run, and how.
struct ChildOptions {
  std::vector<std::string> argv;              // argv[0]: a path, or a name looked up in PATH
  std::map<std::string, std::string> env;     // added to (and overriding) the environment
  bool search_path = true;                    // false: argv[0] is taken as a path as given
  enum class Output { inherit, null, file };  // where stdout and stderr go
  Output output = Output::inherit;
  std::string output_path;                    // Output::file: appended to
  bool stdin_null = false;                    // stdin from /dev/null
  double timeout_s = 0;                       // then the group is killed; 0: no limit
  // Runs every poll_interval while the child lives, and once after it
  // ended; true kills the group (reported as timed_out). An exception out
  // of it kills and reaps the child before it leaves run_child.
  std::function<bool()> poll;
  std::chrono::milliseconds poll_interval{50};
  // When stdin is the terminal and the tool its foreground, the child's
  // group gets the terminal while it runs (it can read it, Ctrl-C and
  // Ctrl-Z reach it; Ctrl-Z stops the tool with it).
  bool lend_terminal = false;
  // On a stop signal of the tool (see install_child_stop_handlers): kill
  // the group at once, or pass the signal on to it and kill it after
  // stop_grace.
  enum class OnStop { kill, forward };
  OnStop on_stop = OnStop::kill;
  std::chrono::milliseconds stop_grace{2000};
};

// How it ended.
struct ChildOutcome {
  bool started = false;
  std::string start_error;  // why it could not be started (fork, exec, output file)
  std::string wait_error;   // waitpid failed: how it ended is unknown
  int exit_code = -1;       // when it exited
  int signal = 0;           // when a signal killed it (not ours)
  bool timed_out = false;   // killed at the time limit, or because poll said so
  // SIGTTIN or SIGTTOU: it used the terminal from a background process
  // group (the tool did not hold the terminal to lend it) and was killed.
  int stopped_by = 0;
  // Not 0: the run was stopped. The tool got this signal (SIGINT, SIGTERM,
  // SIGHUP), or the child, holding the terminal, was interrupted from it
  // (Ctrl-C: SIGINT, SIGQUIT).
  int stop_signal = 0;
  double seconds = 0.0;
};

// For main, before any child: SIGCHLD back to its default (started with it
// ignored, the tool would not see its children end), and SIGINT, SIGTERM
// and SIGHUP recorded for run_child (see install_stop_handlers).
void install_child_stop_handlers();

// The stop signal the tool got since install_child_stop_handlers, 0 while none.
int child_stop_signal();

// Runs the child to its end (see ChildOptions). Leftover processes of its
// group are killed when it ends. Not thread-safe (waitpid, signals).
ChildOutcome run_child(const ChildOptions& options);

// "SIGTERM" (or "signal N").
std::string signal_name(int signal);
// "SIGSEGV (Segmentation fault)".
std::string signal_text(int signal);

}  // namespace xal::common
