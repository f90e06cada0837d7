// The terminal on stdin, lent to a child's process group while it runs
// (child_process.cpp). Gives it back on destruction. Not thread-safe.
#pragma once

#include <signal.h>
#include <unistd.h>

namespace xal::common {

class Terminal {
 public:
  Terminal() = default;
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;
  ~Terminal() { take_back(); }

  // Whether stdin is a terminal whose foreground is this process's group.
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

}  // namespace xal::common
