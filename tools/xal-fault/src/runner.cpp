#include "runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

namespace xal::faulttool {

Outcome run_command(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env,
                    double timeout_s, bool quiet) {
  Outcome o;
  if (argv.empty()) {
    o.start_error = "no command given";
    return o;
  }
  // An error pipe reports a failed exec to the parent (close-on-exec).
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    o.start_error = std::string("pipe: ") + std::strerror(errno);
    return o;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    o.start_error = std::string("fork: ") + std::strerror(errno);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return o;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    if (quiet) {
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) {
        ::dup2(null, 1);
        ::dup2(null, 2);
      }
    }
    ::execvp(args[0], args.data());
    const int err = errno;
    if (::write(pipefd[1], &err, sizeof err) < 0) _exit(127);
    _exit(127);
  }
  ::setpgid(pid, pid);
  ::close(pipefd[1]);
  int err = 0;
  const ssize_t n = ::read(pipefd[0], &err, sizeof err);
  ::close(pipefd[0]);
  if (n == sizeof err) {
    ::waitpid(pid, nullptr, 0);
    o.start_error = "cannot run '" + argv[0] + "': " + std::strerror(err);
    return o;
  }
  o.started = true;
  int status = 0;
  bool killed = false;
  const auto deadline = start + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    if (timeout_s > 0 && !killed && std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      killed = true;
      o.timed_out = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start)
                  .count();
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  if (o.timed_out) o.signal = 0;
  // Leftover children of the command die with it.
  ::kill(-pid, SIGKILL);
  return o;
}

std::string describe(const Outcome& o, double timeout_s) {
  if (!o.started) return "not started: " + o.start_error;
  if (o.timed_out) {
    std::ostringstream text;  // 0.5 as "0.5", 60 as "60"
    text << "timed out after " << timeout_s << " s";
    return text.str();
  }
  if (o.signal != 0) {
    const char* name = ::sigabbrev_np(o.signal);
    return "killed by signal " + std::to_string(o.signal) + " (SIG" +
           (name != nullptr ? name : "?") + ")";
  }
  return "exit " + std::to_string(o.exit_code);
}

int shell_status(const Outcome& o) {
  if (!o.started) return 127;
  if (o.timed_out) return 124;
  if (o.signal != 0) return 128 + o.signal;
  return o.exit_code;
}

}  // namespace xal::faulttool
