// xal-fault's commands, run by the tools' common runner
// (xal_common/child_process.hpp), and how they ended in words.
#include "runner.hpp"

#include <sstream>

#include "xal_common/child_process.hpp"

namespace xal::faulttool {

void install_signal_handlers() { xal::common::install_child_stop_handlers(); }

Outcome run_command(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env,
                    double timeout_s, bool quiet) {
  xal::common::ChildOptions options;
  options.argv = argv;
  options.env = env;
  options.output = quiet ? xal::common::ChildOptions::Output::null
                         : xal::common::ChildOptions::Output::inherit;
  options.timeout_s = timeout_s;
  options.poll_interval = std::chrono::milliseconds(5);
  options.lend_terminal = true;
  options.on_stop = xal::common::ChildOptions::OnStop::forward;
  return xal::common::run_child(options);
}

std::string signal_name(int signal) { return xal::common::signal_name(signal); }

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
