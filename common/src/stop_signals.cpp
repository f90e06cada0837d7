#include "xal_common/stop_signals.hpp"

#include <signal.h>

#include <csignal>
#include <initializer_list>

namespace xal::common {

void install_stop_handlers(void (*handler)(int)) {
  std::signal(SIGCHLD, SIG_DFL);
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace xal::common
