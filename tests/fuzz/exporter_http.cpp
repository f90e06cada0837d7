// Requests to xal-exporter: whatever a client sends on a connection
// (request line, query, headers, body) goes through cpp-httplib's request
// parser to the exporter's routes (/metrics, /healthz, /, as serve() in
// tools/xal-exporter/server.cpp sets them up). The answer must be a
// well-formed HTTP status line, whatever came in.
#include <httplib.h>

#include <algorithm>
#include <cstring>

#include "fuzz_check.hpp"

namespace {

// One connection: reads the input, collects what the server writes.
class InputStream final : public httplib::Stream {
 public:
  InputStream(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, size_ - pos_);
    std::memcpy(ptr, data_ + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    written.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 9464;
  }
  socket_t socket() const override { return 0; }
  bool exhausted() const { return pos_ == size_; }

  std::string written;

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// The exporter's routes, with a fixed exposition for /metrics.
class ExporterServer final : public httplib::Server {
 public:
  ExporterServer() {
    Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("# HELP xal_up xal is up\n# TYPE xal_up gauge\nxal_up 1\n",
                      "text/plain; version=0.0.4; charset=utf-8");
    });
    Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain; charset=utf-8");
    });
    Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<!DOCTYPE html>\n<html></html>\n", "text/html; charset=utf-8");
    });
  }
  // Every request of the connection (keep-alive), as the server's worker
  // does for a socket.
  void serve(InputStream& in) {
    for (int requests = 0; requests < 16 && !in.exhausted(); ++requests) {
      bool closed = false;
      const size_t before = in.written.size();
      process_request(in, false, closed, nullptr);
      check_answer(in.written.substr(before));
      if (closed) break;
    }
  }

 private:
  static void check_answer(const std::string& answer) {
    if (answer.empty()) return;  // a connection that ended before a request line
    XAL_FUZZ_CHECK(answer.rfind("HTTP/1.1 ", 0) == 0 && answer.size() >= 12,
                   "an answer without a status line: " + answer.substr(0, 80));
    const int status = std::atoi(answer.substr(9, 3).c_str());
    XAL_FUZZ_CHECK(status >= 100 && status <= 599, "status " + answer.substr(9, 3));
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ExporterServer server;
  InputStream in(data, size);
  server.serve(in);
  return 0;
}
