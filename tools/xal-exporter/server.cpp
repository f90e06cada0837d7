#include "server.hpp"

#include <httplib.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "exposition.hpp"

namespace xal::exporter {
namespace {

constexpr const char* kIndexPage =
    "<!DOCTYPE html>\n<html><head><title>xal-exporter</title></head>\n"
    "<body><h1>xal-exporter</h1>\n"
    "<p>Metrics of xal devices in the Prometheus text format.</p>\n"
    "<ul><li><a href=\"/metrics\">/metrics</a></li>\n"
    "<li><a href=\"/healthz\">/healthz</a></li></ul>\n</body></html>\n";

struct AddrInfoDeleter {
  void operator()(addrinfo* ai) const { freeaddrinfo(ai); }
};

std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

}  // namespace

std::string diagnose_bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* raw = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &raw);
  if (rc != 0) {
    return "cannot resolve host '" + host + "': " + gai_strerror(rc);
  }
  const std::unique_ptr<addrinfo, AddrInfoDeleter> list(raw);
  std::string reason = "no usable address for '" + host + "'";
  for (addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
    const int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) {
      reason = std::string("cannot create a socket: ") + std::strerror(errno);
      continue;
    }
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    const int b = bind(fd, ai->ai_addr, ai->ai_addrlen);
    const int bind_errno = errno;
    const int l = b == 0 ? listen(fd, 1) : -1;
    const int listen_errno = errno;
    close(fd);
    if (b == 0 && l == 0) return "";
    const int e = b != 0 ? bind_errno : listen_errno;
    if (e == EADDRINUSE) {
      return "port " + service + " on " + host + " is in use";
    }
    if (e == EACCES) {
      return "no permission to bind port " + service + " on " + host;
    }
    if (e == EADDRNOTAVAIL) {
      return "address " + host + " is not available on this machine";
    }
    reason = "cannot bind " + host + ":" + service + ": " + std::strerror(e);
  }
  return reason;
}

void block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

int serve(const ServeOptions& options, const ScrapeFunction& scrape,
          std::ostream& out, std::ostream& err) {
  // SIGINT/SIGTERM are taken by a watcher thread; every other thread
  // inherits the mask (block_stop_signals) and never sees them.
  block_stop_signals();
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);

  if (options.port < 0 || options.port > 65535) {
    err << "xal-exporter: port " << options.port << " is not in 0..65535\n";
    return 1;
  }
  httplib::Server server;
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, with which a
  // second exporter binds the same port and the kernel splits the scrapes
  // between the two, instead of the second failing with "in use".
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  std::mutex scrape_mutex;
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    try {
      std::lock_guard lock(scrape_mutex);
      res.set_content(scrape(), kContentType);
    } catch (const std::exception& e) {
      res.status = 500;
      res.set_content(std::string("xal-exporter: ") + e.what() + "\n",
                      "text/plain; charset=utf-8");
    }
  });
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain; charset=utf-8");
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(kIndexPage, "text/html; charset=utf-8");
  });

  int port = options.port;
  if (port == 0) {
    port = server.bind_to_any_port(options.host.c_str());
    if (port < 0) port = 0;
  } else if (!server.bind_to_port(options.host.c_str(), port)) {
    port = 0;
  }
  if (port == 0) {
    std::string reason = diagnose_bind(options.host, options.port);
    if (reason.empty()) {
      reason = "cannot listen on " + options.host + ":" +
               std::to_string(options.port);
    }
    err << "xal-exporter: " << reason << '\n';
    return 1;
  }

  std::atomic<bool> done{false};
  std::thread watcher([&] {
    const timespec tick{0, 50'000'000};
    bool requested = false;
    while (!done.load()) {
      const int sig = sigtimedwait(&signals, nullptr, &tick);
      if (sig == SIGINT || sig == SIGTERM) requested = true;
      // stop() only acts on a running server: wait until it listens.
      if (requested && server.is_running()) {
        server.stop();
        return;
      }
    }
  });
  out << "xal-exporter: serving http://" << url_host(options.host) << ':'
      << port << "/metrics" << std::endl;
  const bool ok = server.listen_after_bind();
  done.store(true);
  watcher.join();
  if (!ok) {
    err << "xal-exporter: the server stopped with an error\n";
    return 1;
  }
  out << "xal-exporter: stopped" << std::endl;
  return 0;
}

}  // namespace xal::exporter
