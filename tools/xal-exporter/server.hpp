// The HTTP side of xal-exporter (cpp-httplib): GET /metrics, / and /healthz,
// bound to one address, stopped cleanly by SIGINT or SIGTERM.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace xal::exporter {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 9464;  // 0: pick a free port and print it
};

// Produces the body of /metrics; may throw (answered as 500 with the
// message). Called from the server's worker threads, one call at a time.
using ScrapeFunction = std::function<std::string()>;

// Serves until SIGINT or SIGTERM. Prints "serving http://HOST:PORT/metrics"
// to `out` once listening. Returns the exit status: 0 after a clean stop,
// 1 when the address cannot be bound (the reason, e.g. "port 9464 on
// 127.0.0.1 is in use", goes to `err`). Blocks SIGINT and SIGTERM in the
// calling thread; call it from the main thread before starting others.
int serve(const ServeOptions& options, const ScrapeFunction& scrape,
          std::ostream& out, std::ostream& err);

// Blocks SIGINT and SIGTERM in the calling thread, so that threads started
// afterwards (xal's backends, the server's workers) inherit the mask and
// serve() alone takes them. Call from main() before xal_init.
void block_stop_signals();

// Why binding HOST:PORT fails now ("port 9464 on 127.0.0.1 is in use",
// "cannot resolve host ...", ...), found by trying it; "" if it would work.
std::string diagnose_bind(const std::string& host, int port);

}  // namespace xal::exporter
