// xal-exporter: serves the metrics of xal devices in the Prometheus text
// format on GET /metrics (127.0.0.1:9464 by default), or prints them once.
//
// Exit status: 0 after a clean stop (SIGINT/SIGTERM) or --once; 1 when
// xal_init fails, a --device does not exist, the address cannot be bound,
// or --once cannot write to stdout; 2 for bad options, and when --backend did not load. A device that
// cannot be read is exported as such (xal_device_properties_up 0).
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
#include "tool_support.hpp"
#include "xal/xal.h"
#include "xal_common/cli.hpp"

namespace {

struct Options {
  xal::exporter::ServeOptions serve;
  bool once = false;
  std::vector<uint32_t> devices;
  xal::tools::BackendOptions load;
};

// One exposition of the devices in `devices` (all when empty). A device
// that cannot be read is in it (xal_device_properties_up 0) with the
// others, and said on `warnings` when given.
std::string scrape(const std::vector<uint32_t>& devices,
                   std::ostream* warnings = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  const xal::telemetry::Snapshot snap = xal::telemetry::take_snapshot(devices);
  if (warnings != nullptr) {
    (void)xal::telemetry::unreadable_devices(snap, "xal-exporter", *warnings);
  }
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  return xal::exporter::render_exposition(snap, seconds);
}

int run(const Options& opt) {
  if (!opt.once) xal::exporter::block_stop_signals();
  const xal::tools::Session session("xal-exporter", opt.load, std::cerr);
  if (!session.ok()) return 1;

  // Fails early (bad --device, broken backend) rather than on first scrape.
  const std::string first = scrape(opt.devices, opt.once ? &std::cerr : nullptr);
  if (opt.once) {
    std::cout << first;
    if (!xal::tools::flush_stdout("xal-exporter", std::cerr)) return 1;
  }
  if (const int status = xal::tools::check_backend_option("xal-exporter", opt.load, std::cerr)) {
    return status;
  }
  if (opt.once) return 0;
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
                   "Export only device N (global index; repeatable)")
        ->check(xal::common::WholeNumber());
    xal::tools::add_backend_options(app, opt.load);
    xal::tools::add_version_flag(app, "xal-exporter");
    if (const auto status = xal::common::parse_options(app, "xal-exporter", argc, argv)) {
      return *status;
    }
    return run(opt);
  } catch (const std::bad_alloc&) {
    std::cerr << "xal-exporter: out of host memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "xal-exporter: " << e.what() << '\n';
    return 1;
  }
}
