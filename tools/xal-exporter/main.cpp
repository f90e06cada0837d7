// xal-exporter: serves the metrics of xal devices in the Prometheus text
// format on GET /metrics (127.0.0.1:9464 by default), or prints them once.
//
// Exit status: 0 after a clean stop (SIGINT/SIGTERM) or --once; 1 when
// xal_init or reading the devices fails, or the address cannot be bound;
// CLI11's codes for bad options.
#include <CLI/CLI.hpp>
#include <chrono>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "exposition.hpp"
#include "server.hpp"
#include "snapshot.hpp"
#include "xal/xal.h"

namespace {

struct Options {
  xal::exporter::ServeOptions serve;
  bool once = false;
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

// One exposition of the devices in `devices` (all when empty).
std::string scrape(const std::vector<uint32_t>& devices) {
  const auto start = std::chrono::steady_clock::now();
  const xal::telemetry::Snapshot snap = xal::telemetry::take_snapshot(devices);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  return xal::exporter::render_exposition(snap, seconds);
}

int run(const Options& opt) {
  if (!opt.once) xal::exporter::block_stop_signals();
  xal_init_options_t init{};
  init.struct_size = sizeof(init);
  init.backends = opt.backend.empty() ? nullptr : opt.backend.c_str();
  init.backend_path =
      opt.backend_path.empty() ? nullptr : opt.backend_path.c_str();
  init.validation = -1;
  const xal_status_t status = xal_init(&init);
  if (status != XAL_SUCCESS) {
    std::cerr << "xal-exporter: xal_init failed: "
              << xal::telemetry::last_error_text(status) << '\n';
    return 1;
  }
  XalSession session;

  // Fails early (bad --device, broken backend) rather than on first scrape.
  const std::string first = scrape(opt.devices);
  if (opt.once) {
    std::cout << first;
    std::cout.flush();
    return 0;
  }
  return xal::exporter::serve(
      opt.serve, [&opt] { return scrape(opt.devices); }, std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"xal-exporter: xal device metrics for Prometheus"};
    Options opt;
    app.add_option("--host", opt.serve.host,
                   "Address to listen on (default 127.0.0.1; 0.0.0.0 for "
                   "every interface)");
    app.add_option("--port,-p", opt.serve.port,
                   "Port to listen on (default 9464; 0 picks a free port and "
                   "prints it)")
        ->check(CLI::Range(0, 65535));
    app.add_flag("--once", opt.once,
                 "Print the exposition to stdout and exit (for tests, cron, "
                 "node_exporter's textfile collector)");
    app.add_option("--device,-d", opt.devices,
                   "Export only device N (global index; repeatable)");
    app.add_option("--backend", opt.backend,
                   "Load only this backend (a name or path, as XAL_BACKENDS)");
    app.add_option("--backend-path", opt.backend_path,
                   "Extra plugin folders, ':'-separated (as XAL_BACKEND_PATH)");
    app.set_version_flag("--version",
                         std::string("xal-exporter, ABI ") +
                             std::to_string(XAL_ABI_VERSION_MAJOR) + "." +
                             std::to_string(XAL_ABI_VERSION_MINOR));
    CLI11_PARSE(app, argc, argv);
    return run(opt);
  } catch (const std::bad_alloc&) {
    std::cerr << "xal-exporter: out of host memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "xal-exporter: " << e.what() << '\n';
    return 1;
  }
}
