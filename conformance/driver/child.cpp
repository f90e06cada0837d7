// Child processes of xal-conform (see child.hpp): the suite, run by the
// tools' common runner (xal_common/child_process.hpp).
#include "child.hpp"

#include <fstream>
#include <sstream>

#include "xal_common/child_process.hpp"

namespace conform_driver {

Stopped::Stopped(int sig)
    : std::runtime_error(std::string("stopped by ") + signal_text(sig)), signal(sig) {}

void install_signal_handlers() { xal::common::install_child_stop_handlers(); }

void throw_if_stopped() {
  if (const int sig = xal::common::child_stop_signal(); sig != 0) throw Stopped(sig);
}

ChildResult run_child(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& env,
                      const std::string& log_path, double timeout_s,
                      const std::function<bool()>& poll) {
  xal::common::ChildOptions o;
  o.argv = argv;
  o.env = env;
  o.search_path = false;
  o.output = xal::common::ChildOptions::Output::file;
  o.output_path = log_path;
  o.stdin_null = true;
  o.timeout_s = timeout_s;
  o.poll = poll;
  o.on_stop = xal::common::ChildOptions::OnStop::kill;
  const xal::common::ChildOutcome out = xal::common::run_child(o);
  if (out.stop_signal != 0) throw Stopped(out.stop_signal);
  ChildResult result;
  result.started = out.started;
  result.start_error = out.start_error;
  result.exit_code = out.exit_code;
  result.signal = out.stopped_by != 0 ? out.stopped_by : out.signal;  // killed when stopped
  result.timed_out = out.timed_out;
  result.wait_error = out.wait_error;
  return result;
}

std::string signal_text(int signal) { return xal::common::signal_text(signal); }

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
