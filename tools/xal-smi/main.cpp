// xal-smi: a table of xal devices with live metrics, in the manner of
// nvidia-smi and rocm-smi. `--json` for scripts, `--watch` to refresh.
//
// Exit status: 0 on success; 1 when xal_init or a reading fails (or a
// --device index does not exist); CLI11's codes for bad options.
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
#include "xal/xal.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_signal(int) { g_stop = 1; }

struct Options {
  bool json = false;
  double watch_seconds = 0.0;  // 0: print once
  bool watch = false;
  uint64_t count = 0;          // 0: until interrupted
  std::vector<uint32_t> devices;
  std::string backend;
  std::string backend_path;
};

// Shuts xal down when it goes out of scope.
struct XalSession {
  XalSession() = default;
  XalSession(const XalSession&) = delete;
  XalSession& operator=(const XalSession&) = delete;
  ~XalSession() { xal_shutdown(); }
};

void print_once(const Options& opt, bool tty) {
  const xal::telemetry::Snapshot snap =
      xal::telemetry::take_snapshot(opt.devices);
  if (opt.json) {
    const auto j = xal::smi::render_json(snap, xal::smi::utc_time_iso());
    // One document per line while watching (JSON Lines), pretty otherwise.
    std::cout << (opt.watch
                      ? j.dump(-1, ' ', false,
                               nlohmann::json::error_handler_t::replace)
                      : j.dump(2, ' ', false,
                               nlohmann::json::error_handler_t::replace))
              << '\n';
    return;
  }
  if (opt.watch && tty) std::cout << "\x1b[H\x1b[2J";  // home, clear screen
  xal::smi::render_text(snap, xal::smi::local_time_text(), std::cout);
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
  xal_init_options_t init{};
  init.struct_size = sizeof(init);
  init.backends = opt.backend.empty() ? nullptr : opt.backend.c_str();
  init.backend_path =
      opt.backend_path.empty() ? nullptr : opt.backend_path.c_str();
  init.validation = -1;
  const xal_status_t status = xal_init(&init);
  if (status != XAL_SUCCESS) {
    std::cerr << "xal-smi: xal_init failed: "
              << xal::telemetry::last_error_text(status) << '\n';
    return 1;
  }
  XalSession session;

  const bool tty = isatty(STDOUT_FILENO) == 1;
  if (!opt.watch) {
    print_once(opt, tty);
    std::cout.flush();
    return 0;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  for (uint64_t n = 1; !g_stop; ++n) {
    if (n > 1 && !tty && !opt.json) std::cout << '\n';
    print_once(opt, tty);
    std::cout.flush();
    if (opt.count != 0 && n >= opt.count) break;
    sleep_interruptible(opt.watch_seconds);
  }
  return 0;
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
        ->check(CLI::PositiveNumber);
    app.add_option("--device,-d", opt.devices,
                   "Show only device N (global index; repeatable)");
    app.add_option("--backend", opt.backend,
                   "Load only this backend (a name or path, as XAL_BACKENDS)");
    app.add_option("--backend-path", opt.backend_path,
                   "Extra plugin folders, ':'-separated (as XAL_BACKEND_PATH)");
    app.set_version_flag("--version",
                         std::string("xal-smi, ABI ") +
                             std::to_string(XAL_ABI_VERSION_MAJOR) + "." +
                             std::to_string(XAL_ABI_VERSION_MINOR));
    CLI11_PARSE(app, argc, argv);

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
