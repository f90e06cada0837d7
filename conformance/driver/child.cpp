// Child processes of xal-conform (see child.hpp).
#include "child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "xal_common/stop_signals.hpp"

extern char** environ;

namespace conform_driver {
namespace {

// The stop signal xal-conform got, 0 while none: set by the handler, read
// by run_child.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// Owns a started child: unless released (the child was reaped), kills its
// process group and reaps it on destruction, so that an exception thrown
// while it runs (from `poll`, say) never leaves it running. Not thread-safe.
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

}  // namespace

Stopped::Stopped(int sig)
    : std::runtime_error(std::string("stopped by ") + signal_text(sig)), signal(sig) {}

void install_signal_handlers() { xal::common::install_stop_handlers(on_stop_signal); }

void throw_if_stopped() {
  if (g_stop_signal != 0) throw Stopped(g_stop_signal);
}

ChildResult run_child(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& env,
                      const std::string& log_path, double timeout_s,
                      const std::function<bool()>& poll) {
  throw_if_stopped();
  ChildResult result;
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (env.find(key) == env.end()) env_strings.push_back(entry);
  }
  for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    result.start_error = "cannot open " + log_path + ": " + std::strerror(errno);
    return result;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.start_error = std::string("fork: ") + std::strerror(errno);
    ::close(log_fd);
    return result;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::execve(args[0], args.data(), envp.data());
    const char msg[] = "xal-conform: cannot execute the suite\n";
    (void)!::write(STDERR_FILENO, msg, sizeof(msg) - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, to avoid a race
  ::close(log_fd);
  result.started = true;
  ChildGuard guard(pid);
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      guard.release();
      break;
    }
    if (done < 0 && errno != EINTR) {
      // Never read as an exit code: its status is lost (SIGCHLD ignored?).
      guard.release();  // not ours to wait for any more
      ::kill(-pid, SIGKILL);
      result.wait_error = std::string("waitpid: ") + std::strerror(errno);
      return result;
    }
    throw_if_stopped();  // the guard ends the child
    const bool stop = poll && poll();
    const double elapsed = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start).count();
    if ((stop || elapsed > timeout_s) && !result.timed_out) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (poll) poll();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::string signal_text(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  const char* desc = ::sigdescr_np(signal);
  std::string text = abbrev != nullptr ? std::string("SIG") + abbrev
                                       : "signal " + std::to_string(signal);
  if (desc != nullptr) text += std::string(" (") + desc + ")";
  return text;
}

std::string file_tail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  if (text.size() <= max_bytes) return text;
  size_t from = text.size() - max_bytes;
  // UTF-8 continuation bytes (10xxxxxx) of a character cut in two.
  while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
  return "..." + text.substr(from);
}

}  // namespace conform_driver
