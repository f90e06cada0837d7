// What the soak drivers (xal_soak, xal_soak_mpi) share: result checks that
// count instead of stopping, one JSON status line per cycle, and small
// RAII owners of xal objects. scripts/soak.sh starts the drivers and judges
// their figures.
#pragma once

#include <xal/xal.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <malloc.h>
#include <mutex>
#include <string>
#include <utility>

namespace xal_soak {

using Clock = std::chrono::steady_clock;

// Counts operations, checks and failed checks; prints the first failures.
class Checker {
 public:
  void op(uint64_t n = 1) { ops_.fetch_add(n, std::memory_order_relaxed); }

  bool check(bool ok, const char* file, int line, const char* fmt, ...)
      __attribute__((format(printf, 5, 6))) {
    checks_.fetch_add(1, std::memory_order_relaxed);
    if (ok) return true;
    const uint64_t n = failures_.fetch_add(1, std::memory_order_relaxed);
    if (n < 20) {
      char text[768];
      va_list ap;
      va_start(ap, fmt);
      std::vsnprintf(text, sizeof text, fmt, ap);
      va_end(ap);
      xal_error_info_t e{};
      e.struct_size = sizeof e;
      xal_last_error(&e);
      std::lock_guard lock(print_);
      std::fprintf(stderr, "xal_soak: CHECK FAILED %s:%d: %s (last error %s: %s)\n", file, line,
                   text, xal_status_name(e.status), e.message);
    }
    return false;
  }

  uint64_t ops() const { return ops_.load(); }
  uint64_t checks() const { return checks_.load(); }
  uint64_t failures() const { return failures_.load(); }

 private:
  std::atomic<uint64_t> ops_{0}, checks_{0}, failures_{0};
  std::mutex print_;
};

inline Checker& checker() {
  static Checker c;
  return c;
}

#define SOAK_CHECK(cond, ...) \
  ::xal_soak::checker().check(static_cast<bool>(cond), __FILE__, __LINE__, __VA_ARGS__)
// A call that must succeed.
#define SOAK_OK(call) SOAK_CHECK((call) == XAL_SUCCESS, "%s", #call)
// A call that must give `status`.
#define SOAK_IS(call, status)                                                         \
  [&] {                                                                               \
    const xal_status_t got_ = (call);                                                 \
    return SOAK_CHECK(got_ == (status), "%s gave %s, expected %s", #call,            \
                      xal_status_name(got_), xal_status_name(status));                \
  }()

// Command line: --seconds S (how long to run), --cycle-ms MS (one
// xal_init .. xal_shutdown), --status FILE (one JSON line per cycle),
// --cycles C and --rounds N (bounded by work: C cycles of N rounds per
// thread).
struct Options {
  double seconds = 60;
  int cycle_ms = 4000;
  int threads = 3;
  uint64_t cycles = 0;  // > 0: this many cycles, whatever the time
  uint64_t rounds = 0;  // > 0: rounds per thread and cycle, not --cycle-ms
  std::string status;
  std::string trace;  // XAL_TRACE of each cycle (the MPI driver adds .<rank>)
};

inline Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--seconds") o.seconds = std::atof(v);
    else if (k == "--cycle-ms") o.cycle_ms = std::atoi(v);
    else if (k == "--threads") o.threads = std::atoi(v);
    else if (k == "--cycles") o.cycles = std::strtoull(v, nullptr, 10);
    else if (k == "--rounds") o.rounds = std::strtoull(v, nullptr, 10);
    else if (k == "--status") o.status = v;
    else if (k == "--trace") o.trace = v;
    else {
      std::fprintf(stderr, "xal_soak: unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  if (o.seconds <= 0 || o.cycle_ms <= 0 || o.threads < 1) {
    std::fprintf(stderr, "xal_soak: --seconds, --cycle-ms and --threads must be positive\n");
    std::exit(2);
  }
  return o;
}

// Appends one line to the status file (opened and closed each time, so
// the driver holds no descriptor of its own between cycles).
inline void status_line(const std::string& file, const std::string& line) {
  if (file.empty()) return;
  std::ofstream(file, std::ios::app) << line << '\n';
}

inline size_t file_size(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  return f ? static_cast<size_t>(f.tellg()) : 0;
}

// The number after `key` ("VmRSS:", "Threads:") in /proc/self/status; 0
// when it is not there.
inline uint64_t self_status_field(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::strtoull(line.c_str() + key.size(), nullptr, 10);
  return 0;
}

// The bytes the process's heap has handed out and not got back (every
// malloc arena, and the chunks it mmaps), as glibc counts them. Taken after
// xal_shutdown, when xal should hold nothing, it shows a leak apart from
// RSS, which the allocator's fragmentation moves too.
inline uint64_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<uint64_t>(m.uordblks) + static_cast<uint64_t>(m.hblkhd);
}

// The process's resident set (VmRSS, KiB) after malloc_trim(0) has given
// back to the kernel what the heap holds free. Taken after xal_shutdown it
// is the same point of every cycle, without the allocator's free pages,
// which come and go with the cycle's work.
inline uint64_t rss_after_trim_kb() {
  malloc_trim(0);
  return self_status_field("VmRSS:");
}

// The process's threads now (/proc/self/status). Taken after xal_shutdown
// it is the same quiet point of every cycle: no stream, communicator or
// worker of the cycle is left, so a thread that xal leaks shows there,
// apart from the workload's own threads, which come and go.
inline uint64_t threads_now() { return self_status_field("Threads:"); }

// RAII owners.
struct Stream {
  xal_stream_t s = nullptr;
  explicit Stream(xal_device_t d, uint32_t flags = 0) { SOAK_OK(xal_stream_create(d, flags, &s)); }
  ~Stream() {
    if (s) SOAK_OK(xal_stream_destroy(s));
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& o) noexcept : s(std::exchange(o.s, nullptr)) {}
  // Forgets a stream that a device reset invalidated.
  void forget() { s = nullptr; }
};

struct Event {
  xal_event_t e = nullptr;
  explicit Event(xal_device_t d, uint32_t flags = 0) { SOAK_OK(xal_event_create(d, flags, &e)); }
  ~Event() {
    if (e) SOAK_OK(xal_event_destroy(e));
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

struct DevMem {
  xal_device_t d = nullptr;
  xal_devptr_t p = 0;
  size_t bytes = 0;
  DevMem() = default;
  DevMem(xal_device_t dev, size_t n) : d(dev), bytes(n) {
    if (!SOAK_OK(xal_mem_alloc(dev, n, &p))) p = 0;
  }
  ~DevMem() { reset(); }
  void reset() {
    if (p) SOAK_OK(xal_mem_free(d, p));
    p = 0;
  }
  void forget() { p = 0; }
  DevMem(const DevMem&) = delete;
  DevMem& operator=(const DevMem&) = delete;
  DevMem(DevMem&& o) noexcept : d(o.d), p(std::exchange(o.p, 0)), bytes(o.bytes) {}
  DevMem& operator=(DevMem&& o) noexcept {
    if (this != &o) {
      reset();
      d = o.d;
      p = std::exchange(o.p, 0);
      bytes = o.bytes;
    }
    return *this;
  }
  explicit operator bool() const { return p != 0; }
};

struct Comm {
  xal_comm_t c = nullptr;
  ~Comm() {
    if (c) SOAK_OK(xal_comm_destroy(c));
  }
  Comm() = default;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  Comm(Comm&& o) noexcept : c(std::exchange(o.c, nullptr)) {}
};

// A 64-bit generator (splitmix64): deterministic per thread and cycle.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

}  // namespace xal_soak
