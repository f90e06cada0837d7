// xal-bench interop: copies through memory a framework owns and imported
// with xal_mem_import (ABI 1.1) against copies through memory xal
// allocated itself, on the same device, stream and host buffer, at 1 MiB
// and 64 MiB, both directions; and the cost of an import itself (import +
// free of a host range, the work xal.from_dlpack does for a numpy array).
//
// The "imported" cases time both kinds in alternating rounds and report
// ratio_vs_owned: bandwidth through imported memory divided by bandwidth
// through xal's own (1.0 = as fast; the target is >= 0.97 from 1 MiB).
// The framework's memory is made through the backend's table directly,
// as a framework makes it through the vendor's API; on the mock the device
// pointer is a host address.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "session.hpp"
#include "subcommands.hpp"
#include "xal/xal_backend.h"

namespace xal::bench {
namespace {

constexpr size_t kSizes[] = {size_t{1} << 20, size_t{64} << 20};
constexpr int kRounds = 9;

enum class Dir { kHtoD, kDtoH };

// Best wall-clock nanoseconds per call of `fn` over `calls` calls.
template <typename Fn>
double best_ns(Fn&& fn, int64_t calls) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < calls; ++i) fn();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(calls);
}

// Device 0's memory two ways: allocated by xal, and allocated through the
// table then imported. Both freed on scope exit.
struct Sides {
  xal_device_t device = nullptr;
  xal_stream_t stream = nullptr;
  xal_devptr_t owned = 0;
  xal_devptr_t native = 0;    // the framework's
  xal_devptr_t imported = 0;  // xal's name for it
  const xal_backend_table_t* table = nullptr;
  xal_bdevice_t* bdevice = nullptr;

  Sides() = default;
  Sides(const Sides&) = delete;
  Sides& operator=(const Sides&) = delete;
  ~Sides() {
    if (stream != nullptr) xal_stream_destroy(stream);
    if (owned != 0) xal_mem_free(device, owned);
    if (imported != 0) xal_mem_free(device, imported);  // forgets the import
    if (native != 0) table->mem_free(bdevice, native);
  }
};

void run_copy(benchmark::State& state, const std::string& name, Dir dir, bool imported,
              size_t bytes) {
  const Session* session = Session::acquire(state, 1);
  if (session == nullptr) return;
  Sides s;
  s.device = session->device();
  void* native_device = nullptr;
  if (!ok(state, xal_handle_get_native(s.device, &s.table, &native_device),
          "xal_handle_get_native"))
    return;
  s.bdevice = static_cast<xal_bdevice_t*>(native_device);
  if (!ok(state, xal_mem_alloc(s.device, bytes, &s.owned), "xal_mem_alloc") ||
      !ok(state, s.table->mem_alloc(s.bdevice, bytes, &s.native), "the table's mem_alloc") ||
      !ok(state, xal_mem_import(s.device, s.native, bytes, 0, &s.imported), "xal_mem_import") ||
      !ok(state, xal_stream_create(s.device, XAL_STREAM_DEFAULT, &s.stream), "xal_stream_create"))
    return;
  std::vector<std::byte> host(bytes, std::byte{0x5a});
  xal_status_t status = XAL_SUCCESS;
  auto copy = [&](xal_devptr_t ptr) {
    status = dir == Dir::kHtoD ? xal_memcpy_htod(s.stream, ptr, host.data(), bytes)
                               : xal_memcpy_dtoh(s.stream, host.data(), ptr, bytes);
    if (status == XAL_SUCCESS) status = xal_stream_synchronize(s.stream);
  };
  const xal_devptr_t mine = imported ? s.imported : s.owned;
  copy(s.owned);  // warm up: commits both ranges' pages
  copy(s.imported);
  if (!ok(state, status, "copy")) return;
  for (auto _ : state) {
    copy(mine);
    if (status != XAL_SUCCESS) {
      ok(state, status, "copy");
      return;
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  if (!imported) return;
  static RoundsCache rounds;  // benchmarks run one at a time
  rounds.apply(state, name, [&](benchmark::UserCounters* counters) {
    const int64_t calls =
        std::clamp<int64_t>(static_cast<int64_t>((size_t{128} << 20) / bytes), 2, 400);
    double owned_ns = 1e300, imported_ns = 1e300;
    for (int r = 0; r < kRounds; ++r) {
      owned_ns = std::min(owned_ns, best_ns([&] { copy(s.owned); }, calls));
      imported_ns = std::min(imported_ns, best_ns([&] { copy(s.imported); }, calls));
    }
    if (!ok(state, status, "copy")) return false;
    *counters = {{"ratio_vs_owned", owned_ns / imported_ns},
                 {"imported_GBps", static_cast<double>(bytes) / imported_ns},
                 {"owned_GBps", static_cast<double>(bytes) / owned_ns}};
    return true;
  });
}

// xal_mem_import of a 1 MiB host range and xal_mem_free of it: the fixed
// cost of handing a framework's buffer to xal (host pointers: the mock).
void run_import_cost(benchmark::State& state) {
  const Session* session = Session::acquire(state, 1);
  if (session == nullptr) return;
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  if (!ok(state, xal_device_get_properties(session->device(), &p), "properties")) return;
  if (!(p.capabilities & XAL_DEVICE_CAP_HOST_POINTERS)) {
    state.SkipWithError("device 0 cannot import host pointers");
    return;
  }
  std::vector<std::byte> host(size_t{1} << 20);
  for (auto _ : state) {
    xal_devptr_t ptr = 0;
    const xal_status_t s = xal_mem_import(session->device(), reinterpret_cast<uintptr_t>(host.data()),
                                          host.size(), XAL_MEM_IMPORT_HOST, &ptr);
    if (!ok(state, s, "xal_mem_import") || !ok(state, xal_mem_free(session->device(), ptr), "free"))
      return;
  }
}

}  // namespace

void register_interop_benchmarks() {
  for (size_t bytes : kSizes) {
    const std::string size = std::to_string(bytes >> 20) + "MiB";
    for (Dir dir : {Dir::kHtoD, Dir::kDtoH}) {
      for (bool imported : {false, true}) {
        const std::string name = std::string("interop/") + (dir == Dir::kHtoD ? "htod/" : "dtoh/") +
                                 (imported ? "imported/" : "owned/") + size;
        benchmark::RegisterBenchmark(name.c_str(), [name, dir, imported, bytes](
                                                       benchmark::State& state) {
          run_copy(state, name, dir, imported, bytes);
        })->UseRealTime();
      }
    }
  }
  benchmark::RegisterBenchmark("interop/import_free/1MiB", run_import_cost)->UseRealTime();
}

}  // namespace xal::bench
