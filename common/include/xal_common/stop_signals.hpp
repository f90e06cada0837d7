// stop_signals.hpp -- for the tools that run a command or a suite as child
// processes and pass a stop on to them (xal-fault, xal-conform).
#pragma once

namespace xal::common {

// Installs `handler` for SIGINT, SIGTERM and SIGHUP (interrupted calls are
// restarted), except for a signal the process started with ignored (nohup,
// `&` in a script), which stays ignored; and sets SIGCHLD back to its
// default, since a parent that left it ignored would make the children's
// exit statuses unreadable. Call once, before starting children.
void install_stop_handlers(void (*handler)(int));

}  // namespace xal::common
