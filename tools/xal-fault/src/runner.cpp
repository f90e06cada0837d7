#include "runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "xal_common/stop_signals.hpp"

namespace xal::faulttool {
namespace {

// The stop signal xal-fault got, 0 while none: set by the handler, read by
// run_command.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

// How long the command's group has after a forwarded stop signal before
// it is killed.
constexpr std::chrono::seconds kStopGrace{2};

// The terminal on stdin, lent to the command's process group while it
// runs. Gives it back on destruction. Not thread-safe.
class Terminal {
 public:
  Terminal() = default;
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;
  ~Terminal() { take_back(); }

  // Whether stdin is a terminal whose foreground is xal-fault's group.
  static bool ours() {
    return ::isatty(STDIN_FILENO) == 1 && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  }
  // Makes `group` the terminal's foreground. SIGTTOU (sent when a
  // background group does this) is blocked meanwhile. Async-signal-safe:
  // the child calls it too, before exec, so that it never reads the
  // terminal before it has it.
  static void set_foreground(pid_t group) {
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTTOU);
    ::sigprocmask(SIG_BLOCK, &block, &old);
    (void)::tcsetpgrp(STDIN_FILENO, group);
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
  }
  void give(pid_t group) {
    set_foreground(group);
    given_ = true;
  }
  void take_back() {
    if (!given_) return;
    set_foreground(::getpgrp());
    given_ = false;
  }
  bool given() const { return given_; }

 private:
  bool given_ = false;
};

}  // namespace

void install_signal_handlers() { xal::common::install_stop_handlers(on_stop_signal); }

Outcome run_command(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env,
                    double timeout_s, bool quiet) {
  Outcome o;
  if (g_stop_signal != 0) {
    o.stop_signal = g_stop_signal;
    return o;
  }
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
  const bool lend_terminal = Terminal::ours();
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
    if (lend_terminal) Terminal::set_foreground(::getpid());
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
  Terminal terminal;
  if (lend_terminal) terminal.give(pid);
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
  std::chrono::steady_clock::time_point forwarded_at;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG | WUNTRACED);
    if (r == pid && WIFSTOPPED(status)) {
      const int sig = WSTOPSIG(status);
      if ((sig == SIGTTIN || sig == SIGTTOU) && !killed) {
        // It needs the terminal, which xal-fault did not hold to lend.
        o.stopped_by = sig;
        ::kill(-pid, SIGKILL);
        killed = true;
      } else if (sig == SIGTSTP && terminal.given()) {
        // Ctrl-Z: xal-fault stops with it, as one shell job; when the job
        // is continued, so is the command.
        terminal.take_back();
        ::raise(SIGTSTP);
        if (Terminal::ours()) terminal.give(pid);
        ::kill(-pid, SIGCONT);
      }
      continue;
    }
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      // Never read as "exit 0": its status is lost (SIGCHLD ignored?).
      o.wait_error = std::string("waitpid: ") + std::strerror(errno);
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (g_stop_signal != 0 && o.stop_signal == 0) {
      o.stop_signal = g_stop_signal;
      ::kill(-pid, o.stop_signal);
      ::kill(-pid, SIGCONT);  // a stopped process would not see it
      forwarded_at = now;
    }
    if (!killed && o.stop_signal != 0 && now - forwarded_at >= kStopGrace) {
      ::kill(-pid, SIGKILL);
      killed = true;
    }
    if (timeout_s > 0 && !killed && now >= deadline) {
      ::kill(-pid, SIGKILL);
      killed = true;
      o.timed_out = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const bool had_terminal = terminal.given();
  terminal.take_back();
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start)
                  .count();
  if (o.wait_error.empty()) {
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  }
  if (o.timed_out || o.stopped_by != 0) o.signal = 0;
  // Ctrl-C at the terminal reached the command alone: xal-fault stops too.
  if (had_terminal && o.stop_signal == 0 && (o.signal == SIGINT || o.signal == SIGQUIT)) {
    o.stop_signal = o.signal;
  }
  // Leftover children of the command die with it.
  ::kill(-pid, SIGKILL);
  return o;
}

std::string signal_name(int signal) {
  const char* name = ::sigabbrev_np(signal);
  return name != nullptr ? std::string("SIG") + name : "signal " + std::to_string(signal);
}

std::string describe(const Outcome& o, double timeout_s) {
  if (!o.started) return "not started: " + o.start_error;
  if (!o.wait_error.empty()) return "unknown (" + o.wait_error + ")";
  if (o.timed_out) {
    std::ostringstream text;  // 0.5 as "0.5", 60 as "60"
    text << "timed out after " << timeout_s << " s";
    return text.str();
  }
  if (o.stopped_by != 0) {
    return "stopped by signal " + std::to_string(o.stopped_by) + " (" +
           signal_name(o.stopped_by) +
           ": it used the terminal from the background) and killed";
  }
  if (o.signal != 0) {
    return "killed by signal " + std::to_string(o.signal) + " (" + signal_name(o.signal) + ")";
  }
  return "exit " + std::to_string(o.exit_code);
}

int shell_status(const Outcome& o) {
  if (!o.started) return 127;
  if (!o.wait_error.empty()) return 2;
  if (o.timed_out) return 124;
  if (o.stopped_by != 0) return 128 + o.stopped_by;
  if (o.signal != 0) return 128 + o.signal;
  return o.exit_code;
}

}  // namespace xal::faulttool
