// A device's memory opened from IPC handles (xal_mem_open_ipc_handle) and
// the processes that exported it. Once an exporter has ended, what the
// handle named has ended too (xal.h): a copy or memset that touches its
// memory is refused with a clear status instead of reaching memory no one
// else shares any more. The vendor runtimes keep such a mapping readable;
// the check is xal's, made only while the device has IPC mappings (one
// atomic load otherwise). Header-only.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <mutex>
#include <string>

#include "xal/xal.h"

namespace xal::support {

// Thread-safe.
class IpcOwners {
 public:
  IpcOwners() = default;
  IpcOwners(const IpcOwners&) = delete;
  IpcOwners& operator=(const IpcOwners&) = delete;
  ~IpcOwners() {
    for (const auto& [base, m] : mappings_) close_pidfd(m.pidfd);
  }

  // Memory [base, base + bytes) opened from a handle of process `pid`.
  void add(uint64_t base, uint64_t bytes, int32_t pid) {
    const int pidfd = open_pidfd(pid);
    std::lock_guard lock(mutex_);
    mappings_.emplace(base, Mapping{bytes, pid, pidfd});
    count_.fetch_add(1, std::memory_order_release);
  }

  // Forgets one mapping at `base` (closed). False when there is none.
  bool remove(uint64_t base) {
    std::lock_guard lock(mutex_);
    auto found = mappings_.find(base);
    if (found == mappings_.end()) return false;
    close_pidfd(found->second.pidfd);
    mappings_.erase(found);
    count_.fetch_sub(1, std::memory_order_release);
    return true;
  }

  // Empty when [ptr, ptr + bytes) is not IPC memory of an exporter that has
  // ended; else the message of the refusal, naming `what`.
  std::string ended(uint64_t ptr, uint64_t bytes, const char* what) const {
    if (count_.load(std::memory_order_acquire) == 0) return {};
    std::lock_guard lock(mutex_);
    auto found = mappings_.upper_bound(ptr);
    if (found == mappings_.begin()) return {};
    --found;
    const Mapping& m = found->second;
    if (ptr - found->first >= m.bytes || !gone(m)) return {};
    char text[256];
    std::snprintf(text, sizeof text,
                  "%s: range [0x%" PRIx64 ", +%" PRIu64 ") is IPC memory of process %" PRId32
                  ", which has ended: close it with xal_mem_close_ipc_handle",
                  what, ptr, bytes, m.pid);
    return text;
  }

 private:
  struct Mapping {
    uint64_t bytes;
    int32_t pid;
    int pidfd;  // readable once the process has ended; -1 without pidfd_open
  };

  static int open_pidfd(int32_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    return -1;
#endif
  }
  static void close_pidfd(int fd) {
    if (fd >= 0) close(fd);
  }
  static bool gone(const Mapping& m) {
    if (m.pidfd >= 0) {
      pollfd p{m.pidfd, POLLIN, 0};
      return poll(&p, 1, 0) > 0;
    }
    return kill(m.pid, 0) != 0 && errno == ESRCH;
  }

  mutable std::mutex mutex_;
  std::multimap<uint64_t, Mapping> mappings_;
  std::atomic<size_t> count_{0};
};

}  // namespace xal::support
