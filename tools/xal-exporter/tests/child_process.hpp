// A child process for the tests: started with posix_spawn, its stdout and
// stderr read through one pipe, always stopped in bounded time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace xal::exporter::test {

class ChildProcess {
 public:
  // Starts `argv[0]` with `argv`; the environment is this process's less
  // every XAL_* variable, plus `env` ("NAME=value"; a later entry
  // replaces an earlier one of the same name). Throws
  // std::runtime_error when it cannot start.
  ChildProcess(const std::vector<std::string>& argv,
               const std::vector<std::string>& env);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Kills the child (SIGKILL) if still running, and reaps it.
  ~ChildProcess();

  // Reads output until a line containing `needle` arrives, the child
  // closes its output, or `timeout` passes. Returns that line or "".
  std::string wait_for_line(const std::string& needle,
                            std::chrono::milliseconds timeout);

  // Sends `signal` and waits up to `timeout` for the exit (then SIGKILL).
  // Returns the exit status, 128+signal if killed by one, -1 if unknown.
  int stop(int signal, std::chrono::milliseconds timeout);

  // Waits up to `timeout` for the child to exit on its own (then SIGKILL).
  int wait(std::chrono::milliseconds timeout);

  // Everything the child wrote so far.
  const std::string& output() const { return output_; }

 private:
  // Reads what is available within `timeout`; false at end of output.
  bool read_some(std::chrono::milliseconds timeout);

  pid_t pid_ = -1;
  int fd_ = -1;
  int status_ = -1;
  std::string output_;
};

}  // namespace xal::exporter::test
