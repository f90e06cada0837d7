// xal-bench share: the per-submit cost of a partition's compute share. A
// small memset (64 bytes, on a mock card) is submitted on
//   whole   - a whole card (no share: one branch),
//   process - a partition at 99% with this process's own token bucket,
//   job     - the same partition with XAL_QUOTA_LEDGER: the job's bucket
//             in the shared ledger (atomics in shared memory),
// in alternating rounds, each round a fresh xal_init with its settings.
// Reports, per submit, the best round's time on the submitting thread's CPU
// clock (whole_ns, process_ns, job_ns: what the caller pays, unaffected by
// other processes) and on the process's CPU clock (*_cpu_ns: every thread,
// the completions the share observes included), the ns added over a whole
// card (process_added_ns, job_added_ns) and job_vs_process (ratio).
// 99% keeps the share from ever making a submit wait in these runs.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "session.hpp"
#include "subcommands.hpp"

namespace xal::bench {
namespace {

constexpr int64_t kSubmits = 20000;
constexpr int64_t kSyncEvery = 256;
constexpr int kRounds = 7;

enum class Mode { kWhole, kProcess, kJob };

struct Cost {
  double thread_ns = 1e300;
  double process_ns = 1e300;
};

void set_env(Mode mode, const std::string& ledger) {
  if (!std::getenv("XAL_BACKENDS")) setenv("XAL_BACKENDS", "mock", 1);
  setenv("XAL_MOCK_DEVICES", "1*a100-40g", 1);
  // Every op queued on the stream's worker: a small op on an idle stream
  // would otherwise run on the caller's thread, on a whole card only (a
  // partition's host functions keep its stream busy).
  setenv("XAL_MOCK_INLINE_COPY", "off", 1);
  if (mode == Mode::kWhole) unsetenv("XAL_PARTITIONS");
  else setenv("XAL_PARTITIONS", "mock:0=1GiB@99%,1GiB@1%", 1);
  if (mode == Mode::kJob) setenv("XAL_QUOTA_LEDGER", ledger.c_str(), 1);
  else unsetenv("XAL_QUOTA_LEDGER");
}

// One round of `mode`: per-submit cost, or false with the state skipped.
bool round(benchmark::State& state, Mode mode, const std::string& ledger, Cost* best) {
  set_env(mode, ledger);
  if (!ok(state, xal_init(nullptr), "xal_init")) return false;
  xal_device_t dev = nullptr;
  xal_stream_t s = nullptr;
  xal_devptr_t p = 0;
  bool good = ok(state, xal_device_get(mode == Mode::kWhole ? 0 : 1, &dev), "xal_device_get") &&
              ok(state, xal_stream_create(dev, XAL_STREAM_DEFAULT, &s), "xal_stream_create") &&
              ok(state, xal_mem_alloc(dev, 4096, &p), "xal_mem_alloc");
  auto submits = [&](int64_t n) {
    for (int64_t i = 1; good && i <= n; ++i) {
      good = xal_memset(s, p, 0, 64) == XAL_SUCCESS &&
             (i % kSyncEvery != 0 || xal_stream_synchronize(s) == XAL_SUCCESS);
    }
    good = good && xal_stream_synchronize(s) == XAL_SUCCESS;
  };
  submits(kSyncEvery);  // the first submit attaches to the job's bucket
  const auto t0 = ThreadCpuClock::now();
  const auto p0 = ProcessCpuClock::now();
  submits(kSubmits);
  const double thread_ns = std::chrono::duration<double, std::nano>(ThreadCpuClock::now() - t0).count();
  const double process_ns = std::chrono::duration<double, std::nano>(ProcessCpuClock::now() - p0).count();
  if (!good) fail(state, "a submit failed: " + error_text(XAL_ERROR_INTERNAL));
  if (p) xal_mem_free(dev, p);
  if (s) xal_stream_destroy(s);
  xal_shutdown();
  best->thread_ns = std::min(best->thread_ns, thread_ns / kSubmits);
  best->process_ns = std::min(best->process_ns, process_ns / kSubmits);
  return good;
}

void BM_ShareSubmit(benchmark::State& state) {
  Session::close();  // each round makes its own xal session
  const std::string ledger = "xal-bench-" + std::to_string(getpid());
  Cost whole, process, job;
  bool good = true;
  for (auto _ : state) {
    for (int r = 0; good && r < kRounds; ++r) {
      good = round(state, Mode::kWhole, ledger, &whole) &&
             round(state, Mode::kProcess, ledger, &process) &&
             round(state, Mode::kJob, ledger, &job);
    }
  }
  for (const char* v :
       {"XAL_MOCK_DEVICES", "XAL_MOCK_INLINE_COPY", "XAL_PARTITIONS", "XAL_QUOTA_LEDGER"})
    unsetenv(v);
  const std::string object = "/dev/shm/xal-ledger-" + std::to_string(getuid()) + "-" + ledger;
  std::remove(object.c_str());
  if (!good) return;
  state.counters["whole_ns"] = whole.thread_ns;
  state.counters["process_ns"] = process.thread_ns;
  state.counters["job_ns"] = job.thread_ns;
  state.counters["process_added_ns"] = process.thread_ns - whole.thread_ns;
  state.counters["job_added_ns"] = job.thread_ns - whole.thread_ns;
  state.counters["job_vs_process"] = job.thread_ns / process.thread_ns;
  state.counters["whole_cpu_ns"] = whole.process_ns;
  state.counters["process_cpu_ns"] = process.process_ns;
  state.counters["job_cpu_ns"] = job.process_ns;
}

}  // namespace

void register_share_benchmarks() {
  benchmark::RegisterBenchmark("share/submit", BM_ShareSubmit)
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace xal::bench
