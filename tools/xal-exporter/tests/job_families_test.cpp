// xal-exporter's per-job and per-process families: a process of a job (a
// shared ledger, a partition at 40%) copies while the exporter, a process
// of its own without the ledger, serves what the job and the process did.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "child_process.hpp"
#include "job_worker.hpp"
#include "prom_parser.hpp"

namespace xal::exporter::test {

using namespace std::chrono_literals;

JobWorker::JobWorker(const std::string& job, double seconds)
    : job_(job),
      child_({XAL_JOB_WORKER_EXE, "2", std::to_string(seconds)},
             {std::string("XAL_BACKENDS=") + XAL_MOCK_PLUGIN,
              "XAL_PARTITIONS=mock:0=1GiB@40%,1GiB@60%", "XAL_QUOTA_LEDGER=" + job}) {
  ready_ = child_.wait_for_line("ready", 30s) != "";
  // Its usage is published every 100 ms; its utilization window lasts 1 s.
  std::this_thread::sleep_for(1300ms);
}

JobWorker::~JobWorker() {
  child_.stop(SIGKILL, 10s);
  unlink(("/dev/shm/xal-ledger-" + std::to_string(getuid()) + "-" + job_).c_str());
}

namespace {

TEST(JobFamilies, TheExporterServesEachJobAndProcess) {
  const std::string job = "xal-exporter-test-" + std::to_string(getpid());
  JobWorker worker(job, 8.0);
  ASSERT_TRUE(worker.ready());
  ChildProcess exporter({XAL_EXPORTER_EXE, "--once"},
                        {std::string("XAL_BACKENDS=") + XAL_MOCK_PLUGIN});
  ASSERT_EQ(exporter.wait(30s), 0) << exporter.output();
  const Parsed p = parse_exposition(exporter.output());
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  const auto share = p.find("xal_job_compute_share_ratio", {{"job", job}});
  ASSERT_EQ(share.size(), 1u) << exporter.output();
  EXPECT_DOUBLE_EQ(share[0].value, 0.4);
  EXPECT_NE(share[0].labels.at("name").find("[part 1/2]"), std::string::npos);
  const auto util = p.find("xal_job_utilization_ratio", {{"job", job}});
  ASSERT_EQ(util.size(), 1u);
  EXPECT_GT(util[0].value, 0.0);
  EXPECT_LE(util[0].value, 1.0);
  const auto procs = p.find("xal_process_copy_bytes_total", {{"job", job}});
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_GT(procs[0].value, 0.0);
  EXPECT_FALSE(procs[0].labels.at("pid").empty());
  EXPECT_EQ(p.find("xal_job_process_count", {{"job", job}}).at(0).value, 1.0);
  EXPECT_EQ(p.find("xal_process_memory_used_bytes", {{"job", job}}).at(0).value,
            1048576.0);
  EXPECT_EQ(p.find("xal_job_ledger_up", {{"job", job}}).at(0).value, 1.0);
}

}  // namespace
}  // namespace xal::exporter::test
