// Overhead of the fault backend with a plan whose rules never fire,
// against the mock backend it wraps, in one run: the same operations
// through each plugin's table (no libxal in between).
//
//   build/bin/xal-fault-bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "xal/xal_backend.h"

namespace {

const xal_backend_table_t* load(const char* path) {
  void* h = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return nullptr;
  auto get = reinterpret_cast<xal_backend_get_fn>(::dlsym(h, XAL_BACKEND_ENTRY_SYMBOL));
  return get != nullptr ? get(XAL_ABI_VERSION) : nullptr;
}

xal_status_t set_error(xal_status_t s, int64_t, const char*, const char*) { return s; }
void log_line(int, const char*, const char*) {}
xal_status_t load_backend(const char* name, const xal_backend_table_t** out,
                          char*, size_t) {
  if (std::strcmp(name, "mock") != 0) return XAL_ERROR_BACKEND_UNAVAILABLE;
  *out = load(XAL_MOCK_PLUGIN_PATH);
  return *out != nullptr ? XAL_SUCCESS : XAL_ERROR_BACKEND_UNAVAILABLE;
}
const char* get_config(const char* key) { return ::getenv(key); }

const xal_backend_services_t kServices = {sizeof(xal_backend_services_t),
                                          XAL_ABI_VERSION, set_error, log_line,
                                          load_backend, get_config};

// Rules on every timed operation that never fire (an nth beyond the run, a
// device that is never used, a size no call has).
constexpr const char* kQuietPlan =
    "mem_alloc=nth(1000000000000)OUT_OF_MEMORY;"
    "memcpy_*=min(1TiB)bitflip;"
    "stream_*=device(1)delay(5);"
    "event_*=nth(1000000000000)TIMEOUT";

struct Instance {
  const xal_backend_table_t* t = nullptr;
  xal_backend_t* b = nullptr;
  xal_bdevice_t* dev = nullptr;
  xal_bstream_t* stream = nullptr;
  xal_bevent_t* event = nullptr;
  xal_devptr_t buf = 0;
  std::vector<uint8_t> host = std::vector<uint8_t>(1 << 20, 1);

  bool start(bool fault) {
    ::setenv("XAL_MOCK_DEVICES", "2*a100-40g", 1);
    ::setenv("XAL_FAULTS", kQuietPlan, 1);
    ::unsetenv("XAL_FAULT_PLAN");
    ::unsetenv("XAL_FAULT_LOG");
    t = load(fault ? XAL_FAULT_PLUGIN_PATH : XAL_MOCK_PLUGIN_PATH);
    if (t == nullptr) return false;
    xal_backend_init_args_t args{sizeof args, &kServices, fault ? "mock" : nullptr};
    if (t->init(&args, &b) != XAL_SUCCESS) return false;
    return t->device_get(b, 0, &dev) == XAL_SUCCESS &&
           t->stream_create(dev, 0, &stream) == XAL_SUCCESS &&
           t->event_create(dev, 0, &event) == XAL_SUCCESS &&
           t->mem_alloc(dev, 1 << 20, &buf) == XAL_SUCCESS;
  }
  ~Instance() {
    if (b == nullptr) return;
    if (buf != 0) t->mem_free(dev, buf);
    if (event != nullptr) t->event_destroy(event);
    if (stream != nullptr) t->stream_destroy(stream);
    t->shutdown(b);
  }
};

Instance& instance(bool fault) {
  static Instance mock, wrapped;
  Instance& i = fault ? wrapped : mock;
  if (i.b == nullptr && !i.start(fault)) {
    std::fprintf(stderr, "xal-fault-bench: cannot start the %s backend\n",
                 fault ? "fault" : "mock");
    std::exit(1);
  }
  return i;
}

void BM_AllocFree(benchmark::State& state, bool fault) {
  Instance& i = instance(fault);
  for (auto _ : state) {
    xal_devptr_t p = 0;
    if (i.t->mem_alloc(i.dev, 4096, &p) != XAL_SUCCESS) state.SkipWithError("alloc");
    i.t->mem_free(i.dev, p);
  }
}

void BM_CopyHtoD(benchmark::State& state, bool fault) {
  Instance& i = instance(fault);
  const auto bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    i.t->memcpy_htod(i.stream, i.buf, i.host.data(), bytes);
    i.t->stream_synchronize(i.stream);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void BM_CopyDtoH(benchmark::State& state, bool fault) {
  Instance& i = instance(fault);
  const auto bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    i.t->memcpy_dtoh(i.stream, i.host.data(), i.buf, bytes);
    i.t->stream_synchronize(i.stream);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void BM_EventRecordSync(benchmark::State& state, bool fault) {
  Instance& i = instance(fault);
  for (auto _ : state) {
    i.t->event_record(i.event, i.stream);
    i.t->event_synchronize(i.event);
  }
}

void BM_StreamQuery(benchmark::State& state, bool fault) {
  Instance& i = instance(fault);
  for (auto _ : state) benchmark::DoNotOptimize(i.t->stream_query(i.stream));
}

// Mock and fault side by side, so that each pair runs in one process.
BENCHMARK_CAPTURE(BM_AllocFree, mock, false);
BENCHMARK_CAPTURE(BM_AllocFree, fault, true);
BENCHMARK_CAPTURE(BM_CopyHtoD, mock, false)->Arg(4096)->Arg(1 << 20);
BENCHMARK_CAPTURE(BM_CopyHtoD, fault, true)->Arg(4096)->Arg(1 << 20);
BENCHMARK_CAPTURE(BM_CopyDtoH, mock, false)->Arg(4096)->Arg(1 << 20);
BENCHMARK_CAPTURE(BM_CopyDtoH, fault, true)->Arg(4096)->Arg(1 << 20);
BENCHMARK_CAPTURE(BM_EventRecordSync, mock, false);
BENCHMARK_CAPTURE(BM_EventRecordSync, fault, true);
BENCHMARK_CAPTURE(BM_StreamQuery, mock, false);
BENCHMARK_CAPTURE(BM_StreamQuery, fault, true);

}  // namespace

BENCHMARK_MAIN();
