#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace xal::exporter::test {
namespace {

using Clock = std::chrono::steady_clock;

int decode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "XAL_", 4) != 0) env_strings.emplace_back(*e);
  }
  // Later entries of `env` replace earlier ones of the same name.
  for (const std::string& entry : env) {
    const std::string name = entry.substr(0, entry.find('=') + 1);
    std::erase_if(env_strings, [&](const std::string& s) {
      return s.compare(0, name.size(), name) == 0;
    });
    env_strings.push_back(entry);
  }
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (std::string& s : args) argp.push_back(s.data());
  argp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  const int rc =
      posix_spawn(&pid_, argp[0], &actions, nullptr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    pid_ = -1;
    throw std::runtime_error("posix_spawn " + argv[0] + ": " +
                             std::strerror(rc));
  }
  fd_ = fds[0];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) close(fd_);
}

bool ChildProcess::read_some(std::chrono::milliseconds timeout) {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  const int r = poll(&p, 1, static_cast<int>(timeout.count()));
  if (r <= 0) return true;
  char buf[4096];
  const ssize_t n = read(fd_, buf, sizeof(buf));
  if (n <= 0) {
    close(fd_);
    fd_ = -1;
    return false;
  }
  output_.append(buf, static_cast<size_t>(n));
  return true;
}

std::string ChildProcess::wait_for_line(const std::string& needle,
                                        std::chrono::milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  size_t line_start = 0;
  while (true) {
    size_t nl = 0;
    while ((nl = output_.find('\n', line_start)) != std::string::npos) {
      std::string line = output_.substr(line_start, nl - line_start);
      line_start = nl + 1;
      if (line.find(needle) != std::string::npos) return line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0 || !read_some(left)) return "";
  }
}

int ChildProcess::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return status_;
  const auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
    if (!read_some(std::chrono::milliseconds(10))) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      while (read_some(std::chrono::milliseconds(50))) {
      }
      return status_ = decode(status);
    }
  }
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status_ = decode(status);
}

int ChildProcess::stop(int signal, std::chrono::milliseconds timeout) {
  if (pid_ > 0) kill(pid_, signal);
  return wait(timeout);
}

}  // namespace xal::exporter::test
