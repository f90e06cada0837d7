// xal-smi: a table of xal devices with live metrics, in the manner of
// nvidia-smi and rocm-smi. `--json` for scripts, `--watch` to refresh.
//
// Exit status: 0 on success; 1 when xal_init fails, a --device index does
// not exist, a device cannot be read (it is shown with the error, the
// others as usual), or stdout cannot be written; 2 for bad options, and when --backend did not load.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "render.hpp"
#include "snapshot.hpp"
#include "tool_support.hpp"
#include "xal/xal.h"
#include "xal_common/cli.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_signal(int) { g_stop = 1; }

struct Options {
  bool json = false;
  double watch_seconds = 0.0;  // 0: print once
  bool watch = false;
  uint64_t count = 0;          // 0: until interrupted
  std::vector<uint32_t> devices;
  xal::tools::BackendOptions load;
};

// Prints one reading; false when a device could not be read (it is shown
// with its error, as are the others).
bool print_once(const Options& opt, bool tty) {
  const xal::telemetry::Snapshot snap =
      xal::telemetry::take_snapshot(opt.devices);
  const bool all_read = !xal::telemetry::unreadable_devices(snap, "xal-smi", std::cerr);
  if (opt.json) {
    const auto j = xal::smi::render_json(snap, xal::smi::utc_time_iso());
    // One document per line while watching (JSON Lines), pretty otherwise.
    std::cout << (opt.watch
                      ? j.dump(-1, ' ', false,
                               nlohmann::json::error_handler_t::replace)
                      : j.dump(2, ' ', false,
                               nlohmann::json::error_handler_t::replace))
              << '\n';
    return all_read;
  }
  if (opt.watch && tty) std::cout << "\x1b[H\x1b[2J";  // home, clear screen
  xal::smi::render_text(snap, xal::smi::local_time_text(), std::cout);
  return all_read;
}

// Sleeps `seconds`, waking early when a signal asked to stop.
void sleep_interruptible(double seconds) {
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration<double>(seconds);
  while (!g_stop && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int run(const Options& opt) {
  const xal::tools::Session session("xal-smi", opt.load, std::cerr);
  if (!session.ok()) return 1;

  const bool tty = isatty(STDOUT_FILENO) == 1;
  bool all_read = true;  // in the last reading
  if (!opt.watch) {
    all_read = print_once(opt, tty);
    if (!xal::tools::flush_stdout("xal-smi", std::cerr)) return 1;
  } else {
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    for (uint64_t n = 1; !g_stop; ++n) {
      if (n > 1 && !tty && !opt.json) std::cout << '\n';
      all_read = print_once(opt, tty);
      if (!xal::tools::flush_stdout("xal-smi", std::cerr)) return 1;
      if (opt.count != 0 && n >= opt.count) break;
      sleep_interruptible(opt.watch_seconds);
    }
  }
  if (const int status = xal::tools::check_backend_option("xal-smi", opt.load, std::cerr)) {
    return status;
  }
  return all_read ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"xal-smi: xal devices with live metrics"};
    Options opt;
    std::vector<std::string> watch_arg;
    app.add_flag("--json", opt.json, "Print JSON (every field, valid bits "
                                      "decoded); JSON Lines with --watch");
    app.add_option("--watch,-l", watch_arg,
                   "Refresh every SECONDS (default 2) until interrupted")
        ->expected(0, 1)
        ->type_name("[SECONDS]");
    app.add_option("--count,-c", opt.count,
                   "With --watch: stop after N refreshes")
        ->check(xal::common::AtLeast(1));
    app.add_option("--device,-d", opt.devices,
                   "Show only device N (global index; repeatable)")
        ->check(xal::common::WholeNumber());
    xal::tools::add_backend_options(app, opt.load);
    xal::tools::add_version_flag(app, "xal-smi");
    if (const auto status = xal::common::parse_options(app, "xal-smi", argc, argv)) {
      return *status;
    }

    opt.watch = app.count("--watch") > 0;
    if (opt.watch) {
      opt.watch_seconds = 2.0;
      if (!watch_arg.empty() && !watch_arg.back().empty()) {
        size_t used = 0;
        double value = -1.0;
        try {
          value = std::stod(watch_arg.back(), &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != watch_arg.back().size() || !(value > 0.0) ||
            value > 86400.0) {
          std::cerr << "xal-smi: --watch: '" << watch_arg.back()
                    << "' is not a number of seconds in (0, 86400]\n";
          return 2;
        }
        opt.watch_seconds = value;
      }
    } else if (opt.count != 0) {
      std::cerr << "xal-smi: --count needs --watch\n";
      return 2;
    }
    return run(opt);
  } catch (const std::bad_alloc&) {
    std::cerr << "xal-smi: out of host memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "xal-smi: " << e.what() << '\n';
    return 1;
  }
}
