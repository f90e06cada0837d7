// The worker process of the shared quota tests (see quota_ledger_worker.hpp).
#include "quota_ledger_worker.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <vector>

#include "xal/xal.h"

namespace xal_test {

namespace {

std::string error_reply(xal_status_t s) {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  return std::string("err ") + xal_status_name(s) + " " + e.message;
}

}  // namespace

int quota_worker_main() {
  std::ios::sync_with_stdio(true);
  xal_device_t dev = nullptr;
  xal_status_t s = xal_init(nullptr);
  const char* index = std::getenv("XAL_QUOTA_WORKER_DEVICE");
  if (s == XAL_SUCCESS)
    s = xal_device_get(index ? static_cast<uint32_t>(std::atoi(index)) : 0, &dev);
  std::cout << (s == XAL_SUCCESS ? std::string("ready") : error_reply(s)) << std::endl;
  if (s != XAL_SUCCESS) return 1;
  std::vector<xal_devptr_t> held;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    unsigned long long n = 0;
    in >> cmd >> n;
    std::string reply = "ok";
    if (cmd == "alloc") {
      xal_devptr_t p = 0;
      s = xal_mem_alloc(dev, n, &p);
      if (s == XAL_SUCCESS) held.push_back(p);
      else reply = error_reply(s);
    } else if (cmd == "free") {
      if (held.empty()) {
        reply = "err nothing to free";
      } else {
        s = xal_mem_free(dev, held.back());
        held.pop_back();
        if (s != XAL_SUCCESS) reply = error_reply(s);
      }
    } else if (cmd == "info") {
      uint64_t f = 0, t = 0;
      s = xal_mem_get_info(dev, &f, &t);
      reply = s == XAL_SUCCESS ? "info " + std::to_string(f) + " " + std::to_string(t)
                               : error_reply(s);
    } else if (cmd == "metrics") {
      xal_device_metrics_t m{};
      m.struct_size = sizeof m;
      s = xal_device_get_metrics(dev, &m);
      reply = s == XAL_SUCCESS ? "limit " + std::to_string(m.memory_limit_bytes)
                               : error_reply(s);
    } else if (cmd == "job") {
      xal_device_metrics_t m{};
      m.struct_size = sizeof m;
      s = xal_device_get_metrics(dev, &m);
      if (s != XAL_SUCCESS) reply = error_reply(s);
      else if (!(m.valid & XAL_METRIC_JOB_MEMORY)) reply = "job none";
      else reply = "job " + std::to_string(m.job_memory_used_bytes) + " " +
                   std::to_string(m.job_processes);
    } else if (cmd == "procs") {
      uint32_t count = 0;
      s = xal_device_get_job_processes(dev, 0, nullptr, &count);
      std::vector<xal_job_process_t> procs(count);
      for (auto& p : procs) p.struct_size = sizeof p;
      if (s == XAL_SUCCESS && count > 0)
        s = xal_device_get_job_processes(dev, count, procs.data(), &count);
      if (s != XAL_SUCCESS) {
        reply = error_reply(s);
      } else {
        reply = "procs";
        for (const auto& p : procs)
          reply += " " + std::to_string(p.pid) + ":" + std::to_string(p.memory_bytes) + ":" +
                   std::to_string(p.limit_bytes) + (p.is_self ? ":self" : "");
      }
    } else if (cmd == "usage") {
      uint32_t count = 0;
      s = xal_device_get_job_processes(dev, 0, nullptr, &count);
      std::vector<xal_job_process_t> procs(count);
      for (auto& p : procs) p.struct_size = sizeof p;
      if (s == XAL_SUCCESS && count > 0)
        s = xal_device_get_job_processes(dev, count, procs.data(), &count);
      reply = s == XAL_SUCCESS ? "usage none" : error_reply(s);
      for (const auto& p : procs)
        if (s == XAL_SUCCESS && p.is_self)
          reply = "usage " + std::to_string(p.bytes_copied) + " " + std::to_string(p.busy_ns) +
                  " " + std::to_string(p.allocations);
    } else if (cmd == "limit") {
      s = xal_device_set_memory_limit(dev, n);
      if (s != XAL_SUCCESS) reply = error_reply(s);
    } else if (cmd == "reset") {
      s = xal_device_reset(dev);
      held.clear();
      if (s != XAL_SUCCESS) reply = error_reply(s);
    } else if (cmd == "copies") {
      long long end = 0, w0 = 0, w1 = 0;
      in >> end >> w0 >> w1;
      std::string error;
      const uint64_t bytes = saturate_with_copies(dev, static_cast<int64_t>(n), end,
                                                  w0, w1, &error);
      reply = error.empty() ? "copied " + std::to_string(bytes) : error;
    } else if (cmd == "churn") {
      // Until killed: allocations, frees and limits of random sizes, each
      // an update of the shared ledger under its lock (seeded with N).
      std::cout << "churning" << std::endl;
      uint64_t x = n * 0x9e3779b97f4a7c15ull + 1;
      auto next = [&x] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
      };
      for (;;) {
        const uint64_t r = next();
        if (r % 16 == 0) {
          (void)xal_device_set_memory_limit(dev, r % 3 == 0 ? 0 : (512ull << 20) + (r >> 40));
        } else if (held.size() < 8 && r % 2 == 0) {
          xal_devptr_t p = 0;
          if (xal_mem_alloc(dev, 1 + (r >> 8) % (48ull << 20), &p) == XAL_SUCCESS)
            held.push_back(p);
        } else if (!held.empty()) {
          const size_t i = (r >> 4) % held.size();
          (void)xal_mem_free(dev, held[i]);
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
    } else if (cmd == "crash") {
      _exit(3);
    } else if (cmd == "quit") {
      return xal_shutdown() == XAL_SUCCESS ? 0 : 2;
    } else {
      reply = "err unknown command '" + cmd + "'";
    }
    std::cout << reply << std::endl;
  }
  return xal_shutdown() == XAL_SUCCESS ? 0 : 2;
}

QuotaWorker::QuotaWorker() {
  int down[2], up[2];
  if (pipe2(down, O_CLOEXEC) != 0) return;
  if (pipe2(up, O_CLOEXEC) != 0) {
    close(down[0]);
    close(down[1]);
    return;
  }
  pid_ = fork();
  if (pid_ == 0) {
    dup2(down[0], 0);
    dup2(up[1], 1);
    char self[] = "/proc/self/exe";
    char flag[] = "--quota-worker";
    char* argv[] = {self, flag, nullptr};
    execv(self, argv);
    _exit(127);
  }
  close(down[0]);
  close(up[1]);
  to_ = down[1];
  from_ = up[0];
  if (pid_ > 0) greeting_ = read_line();
}

QuotaWorker::~QuotaWorker() {
  if (to_ >= 0) close(to_);
  if (from_ >= 0) close(from_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::string QuotaWorker::read_line() {
  for (;;) {
    const auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    pollfd p{from_, POLLIN, 0};
    if (poll(&p, 1, 60000) <= 0) return "";
    char chunk[4096];
    const ssize_t n = read(from_, chunk, sizeof chunk);
    if (n <= 0) return "";
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

bool QuotaWorker::send(const std::string& command) {
  const std::string line = command + "\n";
  return to_ >= 0 &&
         write(to_, line.data(), line.size()) == static_cast<ssize_t>(line.size());
}

std::string QuotaWorker::call(const std::string& command) {
  return send(command) ? read_line() : "";
}

int QuotaWorker::kill9() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGKILL);
  int status = 0;
  if (waitpid(pid_, &status, 0) != pid_) return -1;
  pid_ = -1;
  return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
}

int QuotaWorker::finish(const std::string& command) {
  const std::string line = command + "\n";
  if (write(to_, line.data(), line.size()) < 0) return -1;
  int status = 0;
  if (waitpid(pid_, &status, 0) != pid_) return -1;
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace xal_test
