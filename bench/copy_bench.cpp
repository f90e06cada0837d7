// xal-bench copy: synchronous xal_memcpy_htod / xal_memcpy_dtoh (copy, then
// xal_stream_synchronize) against the same through the backend's table and
// against plain memcpy of the same size, at 4 KiB, 1 MiB and 64 MiB.
//
// The "xal" cases also time the three in alternating rounds and report
// ratio_vs_direct and ratio_vs_memcpy: bandwidth through xal divided by the
// other's (1.0 = as fast), on the wall clock (best round each), and the
// same on the process's CPU clock (cpu_ratio_*: the work every thread of
// the process did per byte, which other processes on a busy machine do not
// disturb). Google Benchmark calls a case several times while it settles
// the iteration count; the rounds run once per reported run (RoundsCache)
// and every call reports their counters. The cases share the process's xal
// session (Session).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "session.hpp"
#include "subcommands.hpp"
#include "xal/xal_backend.h"

namespace xal::bench {
namespace {

constexpr size_t kSizes[] = {size_t{4} << 10, size_t{1} << 20,
                             size_t{64} << 20};
constexpr int kRounds = 9;

enum class Dir { kHtoD, kDtoH };

// Nanoseconds per call on the wall clock and on the process's CPU clock.
struct Cost {
  double wall_ns = 1e300;
  double cpu_ns = 1e300;
  void keep_best(const Cost& c) {
    wall_ns = std::min(wall_ns, c.wall_ns);
    cpu_ns = std::min(cpu_ns, c.cpu_ns);
  }
};

template <typename Fn>
Cost measure(Fn&& fn, int64_t calls) {
  const auto cpu0 = ProcessCpuClock::now();
  const auto wall0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < calls; ++i) {
    fn();
  }
  const auto wall1 = std::chrono::steady_clock::now();
  const auto cpu1 = ProcessCpuClock::now();
  const double n = static_cast<double>(calls);
  return {std::chrono::duration<double, std::nano>(wall1 - wall0).count() / n,
          std::chrono::duration<double, std::nano>(cpu1 - cpu0).count() / n};
}
enum class Path { kXal, kDirect, kMemcpy };

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using HostBuffer = std::unique_ptr<std::byte, FreeDeleter>;

// Page-aligned, touched host memory; nullptr when out of memory.
HostBuffer host_buffer(size_t bytes, int fill) {
  HostBuffer buf(static_cast<std::byte*>(std::aligned_alloc(4096, bytes)));
  if (buf) {
    std::memset(buf.get(), fill, bytes);
  }
  return buf;
}

std::string size_name(size_t bytes) {
  if (bytes >= (size_t{1} << 20)) {
    return std::to_string(bytes >> 20) + "MiB";
  }
  return std::to_string(bytes >> 10) + "KiB";
}

// A device buffer and a stream on device 0, freed on scope exit.
struct DeviceSide {
  xal_device_t device = nullptr;
  xal_devptr_t ptr = 0;
  xal_stream_t stream = nullptr;
  const xal_backend_table_t* table = nullptr;
  xal_bstream_t* bstream = nullptr;

  DeviceSide() = default;
  DeviceSide(const DeviceSide&) = delete;
  DeviceSide& operator=(const DeviceSide&) = delete;
  ~DeviceSide() {
    if (stream != nullptr) {
      xal_stream_destroy(stream);
    }
    if (ptr != 0) {
      xal_mem_free(device, ptr);
    }
  }
};

void run_memcpy(benchmark::State& state, size_t bytes) {
  HostBuffer src = host_buffer(bytes, 0x5a);
  HostBuffer dst = host_buffer(bytes, 0);
  if (!src || !dst) {
    fail(state, "out of host memory");
    return;
  }
  for (auto _ : state) {
    std::memcpy(dst.get(), src.get(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}

void run_device(benchmark::State& state, const std::string& name, Dir dir,
                Path path, size_t bytes) {
  const Session* session = Session::acquire(state, 1);
  if (session == nullptr) {
    return;
  }
  DeviceSide d;
  d.device = session->device();
  void* native = nullptr;
  if (!ok(state, xal_mem_alloc(d.device, bytes, &d.ptr), "xal_mem_alloc") ||
      !ok(state, xal_stream_create(d.device, XAL_STREAM_DEFAULT, &d.stream),
          "xal_stream_create") ||
      !ok(state, xal_handle_get_native(d.stream, &d.table, &native),
          "xal_handle_get_native")) {
    return;
  }
  d.bstream = static_cast<xal_bstream_t*>(native);
  HostBuffer host = host_buffer(bytes, 0x5a);
  HostBuffer other = host_buffer(bytes, 0);
  if (!host || !other) {
    fail(state, "out of host memory");
    return;
  }

  xal_status_t status = XAL_SUCCESS;
  auto xal_copy = [&] {
    status = dir == Dir::kHtoD
                 ? xal_memcpy_htod(d.stream, d.ptr, host.get(), bytes)
                 : xal_memcpy_dtoh(d.stream, host.get(), d.ptr, bytes);
    if (status == XAL_SUCCESS) {
      status = xal_stream_synchronize(d.stream);
    }
  };
  auto direct_copy = [&] {
    status = dir == Dir::kHtoD
                 ? d.table->memcpy_htod(d.bstream, d.ptr, host.get(), bytes)
                 : d.table->memcpy_dtoh(d.bstream, host.get(), d.ptr, bytes);
    if (status == XAL_SUCCESS) {
      status = d.table->stream_synchronize(d.bstream);
    }
  };
  auto host_copy = [&] {
    std::memcpy(other.get(), host.get(), bytes);
    benchmark::ClobberMemory();
  };

  // Warm up: commits the device pages and checks both paths work.
  xal_copy();
  if (!ok(state, status, "xal copy")) {
    return;
  }
  direct_copy();
  if (!ok(state, status, "direct copy")) {
    return;
  }

  for (auto _ : state) {
    if (path == Path::kXal) {
      xal_copy();
    } else {
      direct_copy();
    }
    if (status != XAL_SUCCESS) {
      ok(state, status, "copy");
      return;
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));

  if (path == Path::kXal) {
    static RoundsCache rounds;  // benchmarks run one at a time
    rounds.apply(state, name, [&](benchmark::UserCounters* counters) {
      const int64_t calls = std::clamp<int64_t>(
          static_cast<int64_t>((size_t{128} << 20) / bytes), 2, 4000);
      Cost x, dr, m;
      for (int r = 0; r < kRounds; ++r) {
        x.keep_best(measure(xal_copy, calls));
        dr.keep_best(measure(direct_copy, calls));
        m.keep_best(measure(host_copy, calls));
      }
      if (!ok(state, status, "copy")) {
        return false;
      }
      *counters = {{"ratio_vs_direct", dr.wall_ns / x.wall_ns},
                   {"ratio_vs_memcpy", m.wall_ns / x.wall_ns},
                   {"cpu_ratio_vs_direct", dr.cpu_ns / x.cpu_ns},
                   {"cpu_ratio_vs_memcpy", m.cpu_ns / x.cpu_ns},
                   {"xal_GBps", static_cast<double>(bytes) / x.wall_ns},
                   {"memcpy_GBps", static_cast<double>(bytes) / m.wall_ns}};
      return true;
    });
  }
}

}  // namespace

void register_copy_benchmarks() {
  for (size_t bytes : kSizes) {
    const std::string size = size_name(bytes);
    benchmark::RegisterBenchmark(
        ("copy/memcpy/" + size).c_str(),
        [bytes](benchmark::State& state) { run_memcpy(state, bytes); })
        ->UseRealTime();
    for (Dir dir : {Dir::kHtoD, Dir::kDtoH}) {
      const std::string dname = dir == Dir::kHtoD ? "htod" : "dtoh";
      for (Path path : {Path::kDirect, Path::kXal}) {
        const std::string name = "copy/" + dname + "/" +
                                 (path == Path::kXal ? "xal/" : "direct/") +
                                 size;
        benchmark::RegisterBenchmark(
            name.c_str(), [name, dir, path, bytes](benchmark::State& state) {
              run_device(state, name, dir, path, bytes);
            })->UseRealTime();
      }
    }
  }
}

}  // namespace xal::bench
