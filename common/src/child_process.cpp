// The tools' child-process runner (see child_process.hpp).
#include "xal_common/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include "terminal.hpp"
#include "xal_common/stop_signals.hpp"

extern char** environ;

namespace xal::common {
namespace {

// The stop signal the tool got, 0 while none: set by the handler, read by
// run_child.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// Owns a started child: unless released (the child was reaped), kills its
// process group and reaps it on destruction, so that an exception thrown
// while it runs (from `poll`, say) never leaves it running.
class ChildGuard {
 public:
  explicit ChildGuard(pid_t pid) : pid_(pid) {}
  ~ChildGuard() {
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;
  void release() { pid_ = -1; }

 private:
  pid_t pid_;
};

// A file descriptor closed on destruction.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// The environment of the child: the current one with `extra` over it.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (extra.find(entry.substr(0, entry.find('='))) == extra.end()) out.push_back(entry);
  }
  for (const auto& [key, value] : extra) out.push_back(key + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child, after fork: only async-signal-safe calls. Never returns.
[[noreturn]] void exec_child(const ChildOptions& o, int out_fd, int error_fd, bool terminal,
                             char* const* args, char* const* envp) {
  ::setpgid(0, 0);
  if (terminal) Terminal::set_foreground(::getpid());
  if (o.output == ChildOptions::Output::null) out_fd = ::open("/dev/null", O_WRONLY);
  if (out_fd >= 0) {
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(out_fd, STDERR_FILENO);
  }
  if (o.stdin_null) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
  }
  if (o.search_path) {
    ::execvpe(args[0], args, envp);
  } else {
    ::execve(args[0], args, envp);
  }
  const int err = errno;
  if (::write(error_fd, &err, sizeof err) < 0) ::_exit(127);
  ::_exit(127);
}

}  // namespace

void install_child_stop_handlers() { install_stop_handlers(on_stop_signal); }

int child_stop_signal() { return g_stop_signal; }

ChildOutcome run_child(const ChildOptions& o) {
  ChildOutcome out;
  if (g_stop_signal != 0) {
    out.stop_signal = g_stop_signal;
    return out;
  }
  if (o.argv.empty()) {
    out.start_error = "no command given";
    return out;
  }
  // Everything the child needs is prepared before fork.
  std::vector<std::string> env_strings = child_environment(o.env);
  std::vector<std::string> arg_strings = o.argv;
  const std::vector<char*> envp = pointers(env_strings), args = pointers(arg_strings);
  const bool to_file = o.output == ChildOptions::Output::file;
  Fd log(to_file ? ::open(o.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
                 : -1);
  if (to_file) {
    if (log.get() < 0) {
      out.start_error = "cannot open " + o.output_path + ": " + std::strerror(errno);
      return out;
    }
  }
  // An error pipe reports a failed exec to the parent (close-on-exec).
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    out.start_error = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  Fd read_end(pipefd[0]), write_end(pipefd[1]);
  const bool lend_terminal = o.lend_terminal && Terminal::ours();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.start_error = std::string("fork: ") + std::strerror(errno);
    return out;
  }
  if (pid == 0) exec_child(o, log.get(), write_end.get(), lend_terminal, args.data(), envp.data());
  ::setpgid(pid, pid);  // also from the parent, to avoid a race
  log.reset();
  write_end.reset();
  Terminal terminal;
  if (lend_terminal) terminal.give(pid);
  ChildGuard guard(pid);
  int err = 0;
  ssize_t n = 0;
  while ((n = ::read(read_end.get(), &err, sizeof err)) < 0 && errno == EINTR) {
  }
  if (n == sizeof err) {
    out.start_error = "cannot run '" + o.argv[0] + "': " + std::strerror(err);
    return out;  // the guard reaps it
  }
  out.started = true;
  int status = 0;
  bool killed = false;
  const auto kill_group = [&] {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    killed = true;
  };
  const auto deadline = start + std::chrono::duration<double>(o.timeout_s);
  std::chrono::steady_clock::time_point forwarded_at;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG | WUNTRACED);
    if (r == pid && WIFSTOPPED(status)) {
      const int sig = WSTOPSIG(status);
      if ((sig == SIGTTIN || sig == SIGTTOU) && !killed) {
        out.stopped_by = sig;  // it needs the terminal, which the tool did not hold to lend
        kill_group();
      } else if (sig == SIGTSTP && terminal.given()) {
        // Ctrl-Z: the tool stops with it, as one shell job; when the job is
        // continued, so is the child.
        terminal.take_back();
        ::raise(SIGTSTP);
        if (Terminal::ours()) terminal.give(pid);
        ::kill(-pid, SIGCONT);
      }
      continue;
    }
    if (r == pid) {
      guard.release();
      break;
    }
    if (r < 0 && errno != EINTR) {
      // Never read as an exit code: its status is lost (SIGCHLD ignored?).
      guard.release();  // not ours to wait for any more
      out.wait_error = std::string("waitpid: ") + std::strerror(errno);
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (g_stop_signal != 0 && out.stop_signal == 0) {
      out.stop_signal = g_stop_signal;
      if (o.on_stop == ChildOptions::OnStop::kill) {
        kill_group();
      } else {
        ::kill(-pid, out.stop_signal);
        ::kill(-pid, SIGCONT);  // a stopped process would not see it
        forwarded_at = now;
      }
    }
    if (!killed && out.stop_signal != 0 && now - forwarded_at >= o.stop_grace) kill_group();
    const bool stop = o.poll && o.poll();
    if (!killed && (stop || (o.timeout_s > 0 && now >= deadline))) {
      kill_group();
      out.timed_out = true;
    }
    std::this_thread::sleep_for(o.poll_interval);
  }
  const bool had_terminal = terminal.given();
  terminal.take_back();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.poll && out.stop_signal == 0) o.poll();
  if (out.wait_error.empty()) {
    if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  }
  if (out.timed_out || out.stopped_by != 0) out.signal = 0;
  // Ctrl-C at the terminal reached the child alone: the tool stops too.
  if (had_terminal && out.stop_signal == 0 && (out.signal == SIGINT || out.signal == SIGQUIT)) {
    out.stop_signal = out.signal;
  }
  ::kill(-pid, SIGKILL);  // leftover children of the child die with it
  return out;
}

std::string signal_name(int signal) {
  const char* name = ::sigabbrev_np(signal);
  return name != nullptr ? std::string("SIG") + name : "signal " + std::to_string(signal);
}

std::string signal_text(int signal) {
  const char* desc = ::sigdescr_np(signal);
  std::string text = signal_name(signal);
  if (desc != nullptr) text += std::string(" (") + desc + ")";
  return text;
}

}  // namespace xal::common
