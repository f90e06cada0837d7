// A job's compute share across its processes (XAL_QUOTA_LEDGER): a throttled
// mock A100 split 1GiB@30%,1GiB@70%; three processes of job A on the 30%
// partition and one of job B on the 70% partition, each saturating with
// copies, do 0.30 and 0.70 of the work (each of A's processes drawing from
// its own 30% would make it 0.56). Killed with -9 mid-run, one of A's
// processes leaves its entries behind for no longer than the next look, and
// A stays at 0.30. The ledger's own accounting (xal_ledger_read) tells the
// same fractions. Label "integration": it measures shares over seconds.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "quota_ledger.hpp"
#include "quota_ledger_worker.hpp"
#include "xal/xal.h"

using xal_test::QuotaWorker;

namespace {

constexpr int64_t kMs = 1'000'000;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void sleep_until_ns(int64_t t) {
  while (now_ns() < t) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

std::vector<xal_ledger_row_t> read_ledger(const std::string& name) {
  uint32_t count = 0;
  if (xal_ledger_read(name.c_str(), 0, nullptr, &count) != XAL_SUCCESS) return {};
  std::vector<xal_ledger_row_t> rows(count + 8);
  for (auto& r : rows) r.struct_size = sizeof r;
  if (xal_ledger_read(name.c_str(), static_cast<uint32_t>(rows.size()), rows.data(),
                      &count) != XAL_SUCCESS)
    return {};
  rows.resize(std::min<size_t>(count, rows.size()));
  return rows;
}

// The job row of the partition with `percent` in ledger `name`, if any.
const xal_ledger_row_t* job_row(const std::vector<xal_ledger_row_t>& rows,
                                uint32_t percent) {
  for (const auto& r : rows)
    if (r.pid == 0 && r.compute_percent == percent) return &r;
  return nullptr;
}

bool has_pid(const std::vector<xal_ledger_row_t>& rows, pid_t pid) {
  for (const auto& r : rows)
    if (r.pid == pid) return true;
  return false;
}

uint64_t copied(const std::string& reply) {
  if (reply.rfind("copied ", 0) != 0) return 0;
  return std::stoull(reply.substr(7));
}

class MultiProcessShare : public ::testing::Test {
 protected:
  void SetUp() override {
    job_a = "xal-share-a-" + std::to_string(getpid());
    job_b = "xal-share-b-" + std::to_string(getpid());
    setenv("XAL_MOCK_DEVICES", R"([{"profile":"a100-40g","bandwidth_gbps":0.25}])", 1);
    if (lose_a()) {
      // Job A's processes see their device lost 1.5 s after xal_init.
      setenv("XAL_BACKENDS", "fault:mock", 1);
      setenv("XAL_PARTITIONS", "fault:0=1GiB@30%,1GiB@70%", 1);
      setenv("XAL_FAULTS", "memcpy_*=after(1500)device_lost", 1);
    } else {
      setenv("XAL_BACKENDS", XAL_MOCK_PLUGIN, 1);
      setenv("XAL_PARTITIONS", "mock:0=1GiB@30%,1GiB@70%", 1);
    }
    start(job_a, "1", 3);
    unsetenv("XAL_FAULTS");
    start(job_b, "2", 1);
  }
  virtual bool lose_a() const { return false; }
  void TearDown() override {
    workers.clear();
    xal::core::QuotaLedger::unlink(job_a);
    xal::core::QuotaLedger::unlink(job_b);
    for (const char* v : {"XAL_BACKENDS", "XAL_MOCK_DEVICES", "XAL_PARTITIONS",
                          "XAL_QUOTA_LEDGER", "XAL_QUOTA_WORKER_DEVICE", "XAL_FAULTS"})
      unsetenv(v);
  }
  void start(const std::string& job, const char* device, int n) {
    setenv("XAL_QUOTA_LEDGER", job.c_str(), 1);
    setenv("XAL_QUOTA_WORKER_DEVICE", device, 1);
    for (int i = 0; i < n; ++i) {
      workers.push_back(std::make_unique<QuotaWorker>());
      ASSERT_EQ(workers.back()->greeting(), "ready");
    }
  }
  // Every worker copies from `begin` to `end`, counting [w0, end).
  void run(int64_t begin, int64_t end, int64_t w0) {
    for (auto& w : workers)
      ASSERT_TRUE(w->send("copies " + std::to_string(begin) + " " + std::to_string(end) +
                          " " + std::to_string(w0) + " " + std::to_string(end)));
  }
  // A job's busy time in its ledger at `t`.
  uint64_t busy_at(int64_t t, const std::string& job, uint32_t percent) {
    sleep_until_ns(t);
    const auto rows = read_ledger(job);
    const xal_ledger_row_t* r = job_row(rows, percent);
    return r ? r->busy_ns : 0;
  }
  uint64_t busy_a_at(int64_t t) { return busy_at(t, job_a, 30); }

  std::string job_a, job_b;
  std::vector<std::unique_ptr<QuotaWorker>> workers;  // A's three, then B's
};

void report(const char* what, uint64_t a, uint64_t b, double ledger_fraction) {
  const double f = static_cast<double>(a) / static_cast<double>(a + b);
  std::printf("%s: job A (3 processes, 30%%) did %.3f of the work (%llu vs %llu MiB); "
              "its ledger's device time: %.3f of the window\n",
              what, f, static_cast<unsigned long long>(a >> 20),
              static_cast<unsigned long long>(b >> 20), ledger_fraction);
  ::testing::Test::RecordProperty(what, std::to_string(f));
}

}  // namespace

TEST_F(MultiProcessShare, ThreeProcessesOfAJobShareThirtyPercent) {
  const int64_t begin = now_ns() + 300 * kMs, w0 = begin + 500 * kMs,
                end = begin + 3000 * kMs;
  run(begin, end, w0);
  const uint64_t busy0 = busy_a_at(w0);
  const uint64_t busy1 = busy_a_at(end);
  uint64_t a = 0, b = 0;
  for (size_t i = 0; i < workers.size(); ++i) {
    const std::string r = workers[i]->reply();
    ASSERT_EQ(r.rfind("copied ", 0), 0u) << "worker " << i << ": " << r;
    (i < 3 ? a : b) += copied(r);
  }
  const double ledger = static_cast<double>(busy1 - busy0) / static_cast<double>(end - w0);
  report("fraction_30_three_processes", a, b, ledger);
  const double f = static_cast<double>(a) / static_cast<double>(a + b);
  EXPECT_NEAR(f, 0.30, 0.03);
  EXPECT_NEAR(ledger, 0.30, 0.05);

  // The ledger lists the three and what each did on the 30% partition
  // (they also have entries of the other partition: its size is their limit).
  const auto rows = read_ledger(job_a);
  const xal_ledger_row_t* job = job_row(rows, 30);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->processes, 3u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(has_pid(rows, workers[i]->pid()));
  // The process itself reads its usage (xal_job_process_t's usage fields).
  std::istringstream usage(workers[0]->call("usage"));
  std::string word;
  uint64_t copied_bytes = 0, busy = 0, allocations = 0;
  usage >> word >> copied_bytes >> busy >> allocations;
  EXPECT_EQ(word, "usage");
  EXPECT_GT(copied_bytes, 0u);
  EXPECT_GT(busy, 0u);
  EXPECT_LE(allocations, 2u);  // published every 100 ms: 2, or 0 once freed
  for (const auto& r : rows) {
    if (r.pid != 0 && r.compute_percent == 30) {
      EXPECT_GT(r.bytes_copied, 0u) << r.pid;
      EXPECT_GT(r.busy_ns, 0u) << r.pid;
    }
  }
}

TEST_F(MultiProcessShare, AProcessKilledMidRunLeavesTheJobAtItsShare) {
  const int64_t begin = now_ns() + 300 * kMs, kill_at = begin + 1200 * kMs,
                w0 = begin + 1500 * kMs, end = begin + 4000 * kMs;
  run(begin, end, w0);
  sleep_until_ns(kill_at - 200 * kMs);
  EXPECT_EQ(job_row(read_ledger(job_a), 30)->processes, 3u);
  sleep_until_ns(kill_at);
  const pid_t victim = workers[0]->pid();
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  const uint64_t busy0 = busy_a_at(w0);
  const auto during = read_ledger(job_a);
  const uint64_t busy1 = busy_a_at(end);
  uint64_t a = 0, b = 0;
  for (size_t i = 1; i < workers.size(); ++i) {
    const std::string r = workers[i]->reply();
    ASSERT_EQ(r.rfind("copied ", 0), 0u) << "worker " << i << ": " << r;
    (i < 3 ? a : b) += copied(r);
  }
  const double ledger = static_cast<double>(busy1 - busy0) / static_cast<double>(end - w0);
  report("fraction_30_after_kill", a, b, ledger);
  const double f = static_cast<double>(a) / static_cast<double>(a + b);
  EXPECT_NEAR(f, 0.30, 0.03);
  EXPECT_NEAR(ledger, 0.30, 0.05);
  // Its entries are gone; the two others remain.
  ASSERT_NE(job_row(during, 30), nullptr);
  EXPECT_EQ(job_row(during, 30)->processes, 2u);
  EXPECT_FALSE(has_pid(during, victim));
  EXPECT_TRUE(has_pid(during, workers[1]->pid()));
}

// Under the fault backend, job A's device is lost mid-run: its processes
// fail with DEVICE_LOST and draw no more device time, their errors show in
// the ledger, and job B keeps its 70% (the ledger's device time).
class MultiProcessShareLost : public MultiProcessShare {
  void SetUp() override {
#ifndef XAL_WITH_FAULT_BACKEND
    GTEST_SKIP() << "the fault backend is not built";
#endif
    MultiProcessShare::SetUp();
  }
  bool lose_a() const override { return true; }
};

TEST_F(MultiProcessShareLost, ADeviceLostOnOnePartitionLeavesTheOtherAtItsShare) {
  const int64_t begin = now_ns() + 300 * kMs, w0 = begin + 1800 * kMs,
                end = begin + 3500 * kMs;
  run(begin, end, w0);
  const uint64_t a0 = busy_at(w0, job_a, 30), b0 = busy_at(w0, job_b, 70);
  const uint64_t a1 = busy_at(end, job_a, 30), b1 = busy_at(end, job_b, 70);
  for (size_t i = 0; i < workers.size(); ++i) {
    const std::string r = workers[i]->reply();
    if (i < 3)
      EXPECT_NE(r.find("XAL_ERROR_DEVICE_LOST"), std::string::npos) << "worker " << i << ": " << r;
    else
      EXPECT_EQ(r.rfind("copied ", 0), 0u) << r;
  }
  const double window = static_cast<double>(end - w0);
  const double a = static_cast<double>(a1 - a0) / window;
  const double b = static_cast<double>(b1 - b0) / window;
  std::printf("device lost for job A: device time over the window: A %.3f, B %.3f\n", a, b);
  RecordProperty("fraction_70_after_loss", std::to_string(b));
  EXPECT_LT(a, 0.02);
  EXPECT_NEAR(b, 0.70, 0.05);
  const auto rows = read_ledger(job_a);
  ASSERT_NE(job_row(rows, 30), nullptr);
  EXPECT_EQ(job_row(rows, 30)->processes, 3u);
  EXPECT_GT(job_row(rows, 30)->errors, 0u);
}

// A job on a whole card (no partition): its device time is measured too,
// without throttling, so per-job utilization covers whole cards.
class MultiProcessWholeCardJob : public ::testing::Test {
 protected:
  void SetUp() override {
    job = "xal-share-card-" + std::to_string(getpid());
    setenv("XAL_MOCK_DEVICES", R"([{"profile":"a100-40g","bandwidth_gbps":0.25}])", 1);
    setenv("XAL_BACKENDS", XAL_MOCK_PLUGIN, 1);
    unsetenv("XAL_PARTITIONS");
    setenv("XAL_QUOTA_LEDGER", job.c_str(), 1);
    setenv("XAL_QUOTA_WORKER_DEVICE", "0", 1);
    worker = std::make_unique<QuotaWorker>();
    ASSERT_EQ(worker->greeting(), "ready");
  }
  void TearDown() override {
    worker.reset();
    xal::core::QuotaLedger::unlink(job);
    for (const char* v : {"XAL_BACKENDS", "XAL_MOCK_DEVICES", "XAL_QUOTA_LEDGER",
                          "XAL_QUOTA_WORKER_DEVICE"})
      unsetenv(v);
  }
  std::string job;
  std::unique_ptr<QuotaWorker> worker;
};

TEST_F(MultiProcessWholeCardJob, ItsDeviceTimeAndUtilizationAreMeasured) {
  const int64_t begin = now_ns() + 200 * kMs, end = begin + 1600 * kMs;
  ASSERT_TRUE(worker->send("copies " + std::to_string(begin) + " " + std::to_string(end) + " " +
                           std::to_string(begin) + " " + std::to_string(end)));
  // Read while the worker copies (its entry goes once it holds nothing).
  const int64_t t0 = begin + 300 * kMs, t1 = end - 200 * kMs;
  sleep_until_ns(t0);
  const auto rows0 = read_ledger(job);
  sleep_until_ns(t1);
  const auto rows1 = read_ledger(job);
  const std::string reply = worker->reply();
  EXPECT_GT(copied(reply), 0u) << reply;
  const xal_ledger_row_t* r0 = job_row(rows0, 0);
  const xal_ledger_row_t* r1 = job_row(rows1, 0);
  ASSERT_NE(r0, nullptr) << "no job row for the whole card";
  ASSERT_NE(r1, nullptr) << "no job row for the whole card";
  const double fraction =
      static_cast<double>(r1->busy_ns - r0->busy_ns) / static_cast<double>(t1 - t0);
  std::printf("a job saturating a whole card: device time %.3f of the window, "
              "utilization %.1f %%\n", fraction, r1->utilization_percent);
  // Throttled copies keep the card busy the whole window: nearly all of it
  // is device time (and none of it throttled: a whole card has no share).
  // The ledger is published every 100 ms: the window's ends are that coarse.
  EXPECT_GT(fraction, 0.75);
  EXPECT_LT(fraction, 1.25);
  EXPECT_GT(r1->utilization_percent, 50.0);
  EXPECT_EQ(r1->compute_percent, 0u);
}
