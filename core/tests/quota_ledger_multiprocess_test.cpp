// Three processes on one mock card with XAL_MEMORY_LIMIT=1GiB and one
// XAL_QUOTA_LEDGER: together they allocate up to 1 GiB and no more; the one
// that goes over gets OUT_OF_MEMORY naming the job-wide use; the share of a
// process that exits (cleanly or not) is free again.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <string>
#include <vector>

#include "quota_ledger.hpp"
#include "quota_ledger_worker.hpp"
#include "xal/xal.h"

using xal_test::QuotaWorker;

namespace {

constexpr uint64_t kMiB = 1ull << 20;

std::string alloc(uint64_t mib) { return "alloc " + std::to_string(mib * kMiB); }

std::string info(uint64_t free_mib, uint64_t total_mib) {
  return "info " + std::to_string(free_mib * kMiB) + " " +
         std::to_string(total_mib * kMiB);
}

class MultiProcessQuota : public ::testing::Test {
 protected:
  void SetUp() override {
    name = "xal-mp-" + std::to_string(getpid());
    setenv("XAL_BACKENDS", XAL_MOCK_PLUGIN, 1);
    setenv("XAL_MOCK_DEVICES", "1*l4", 1);
    setenv("XAL_MEMORY_LIMIT", "1GiB", 1);
    setenv("XAL_QUOTA_LEDGER", name.c_str(), 1);
  }
  void TearDown() override {
    xal::core::QuotaLedger::unlink(name);
    for (const char* v : {"XAL_BACKENDS", "XAL_MOCK_DEVICES", "XAL_MEMORY_LIMIT",
                          "XAL_QUOTA_LEDGER", "XAL_PARTITIONS",
                          "XAL_QUOTA_WORKER_DEVICE"})
      unsetenv(v);
  }
  std::string name;
};

}  // namespace

TEST_F(MultiProcessQuota, ThreeProcessesShareOneGiB) {
  std::vector<std::unique_ptr<QuotaWorker>> w;
  for (int i = 0; i < 3; ++i) {
    w.push_back(std::make_unique<QuotaWorker>());
    ASSERT_EQ(w.back()->greeting(), "ready") << "worker " << i;
  }
  // 3 x 300 MiB + 100 MiB = 1000 MiB of 1024.
  for (auto& p : w) EXPECT_EQ(p->call(alloc(300)), "ok");
  EXPECT_EQ(w[0]->call(alloc(100)), "ok");
  EXPECT_EQ(w[2]->call("info"), info(24, 1024));

  // The one that goes over is refused, with the job-wide figures.
  const std::string over = w[1]->call(alloc(100));
  EXPECT_EQ(over.rfind("err XAL_ERROR_OUT_OF_MEMORY", 0), 0u) << over;
  EXPECT_NE(over.find("job-wide memory limit of 1.00 GiB"), std::string::npos) << over;
  EXPECT_NE(over.find("1000.00 MiB in use by 3 processes"), std::string::npos) << over;
  EXPECT_NE(over.find("300.00 MiB of it by this one"), std::string::npos) << over;
  EXPECT_NE(over.find(name), std::string::npos) << over;
  // Exactly what is left still fits.
  EXPECT_EQ(w[1]->call(alloc(24)), "ok");
  EXPECT_EQ(w[0]->call("info"), info(0, 1024));
  EXPECT_EQ(w[2]->call("alloc 1").rfind("err XAL_ERROR_OUT_OF_MEMORY", 0), 0u);

  // Worker 0 dies without freeing: its 400 MiB are reclaimed.
  EXPECT_EQ(w[0]->finish("crash"), 3);
  EXPECT_EQ(w[1]->call(alloc(350)), "ok");
  EXPECT_EQ(w[2]->call("info"), info(50, 1024));

  // Worker 2 frees one allocation and quits cleanly: all of its share is free.
  EXPECT_EQ(w[2]->call("free"), "ok");
  EXPECT_EQ(w[1]->call("info"), info(350, 1024));
  EXPECT_EQ(w[2]->finish("quit"), 0);
  EXPECT_EQ(w[1]->call("info"), info(350, 1024));
  EXPECT_EQ(w[1]->call(alloc(350)), "ok");
  EXPECT_EQ(w[1]->call("info"), info(0, 1024));
  EXPECT_EQ(w[1]->finish("quit"), 0);

  // A new process of the job starts with the whole limit.
  QuotaWorker late;
  ASSERT_EQ(late.greeting(), "ready");
  EXPECT_EQ(late.call("info"), info(1024, 1024));
  EXPECT_EQ(late.finish("quit"), 0);
}

// A partition has its own uuid and limit (its size): processes that use the
// same partition share it, and the other partition is apart.
TEST_F(MultiProcessQuota, APartitionIsSharedByItsUuid) {
  unsetenv("XAL_MEMORY_LIMIT");
  setenv("XAL_PARTITIONS", "mock:0=2x4GiB", 1);
  setenv("XAL_QUOTA_WORKER_DEVICE", "1", 1);  // card 0, partitions 1 and 2
  QuotaWorker a, b;
  ASSERT_EQ(a.greeting(), "ready");
  ASSERT_EQ(b.greeting(), "ready");
  setenv("XAL_QUOTA_WORKER_DEVICE", "2", 1);
  QuotaWorker other;
  ASSERT_EQ(other.greeting(), "ready");
  EXPECT_EQ(a.call(alloc(3072)), "ok");
  const std::string over = b.call(alloc(2048));
  EXPECT_NE(over.find("job-wide memory limit of 4.00 GiB"), std::string::npos) << over;
  EXPECT_EQ(b.call(alloc(1024)), "ok");
  EXPECT_EQ(b.call("info"), info(0, 4096));
  EXPECT_EQ(other.call(alloc(4096)), "ok");
  EXPECT_EQ(a.finish("quit"), 0);
  EXPECT_EQ(b.call("info"), info(3072, 4096));
}

// Processes killed with SIGKILL while they allocate, free and set limits as
// fast as they can, so that some die inside an update of the ledger (its
// robust lock held, a sum half changed; the ledger counts each lock it
// takes over from a dead holder, and the rounds go on until that happened
// 3 times): the next process of the job finds every byte of the limit
// free, no entry but its own, and the ledger's lock usable.
TEST_F(MultiProcessQuota, ProcessesKilledMidUpdateLeaveNoQuotaBehind) {
  std::mt19937 rng(static_cast<uint32_t>(getpid()));
  // At least 16 rounds, and more (up to 400) until kills have landed
  // inside the lock 3 times: the ledger counts the locks it took over.
  auto recoveries = [&] {
    std::string e;
    const auto l = xal::core::QuotaLedger::open(name, &e);
    return l ? l->recoveries() : 0;
  };
  int round = 0;
  for (; round < 400 && (round < 16 || recoveries() < 3); ++round) {
    std::vector<std::unique_ptr<QuotaWorker>> w;
    for (int i = 0; i < 3; ++i) {
      w.push_back(std::make_unique<QuotaWorker>());
      ASSERT_EQ(w.back()->greeting(), "ready") << "round " << round << " worker " << i;
      ASSERT_EQ(w.back()->call("churn " + std::to_string(round * 3 + i + 1)), "churning");
    }
    // Killed at different moments of their churn.
    for (auto& p : w) {
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
      EXPECT_EQ(p->kill9(), SIGKILL) << "round " << round;
    }
  }
  EXPECT_GE(recoveries(), 3u) << "after " << round << " rounds";
  RecordProperty("rounds", round);
  RecordProperty("recoveries", static_cast<int>(recoveries()));
  QuotaWorker next;
  ASSERT_EQ(next.greeting(), "ready");
  EXPECT_EQ(next.call("info"), info(1024, 1024));
  EXPECT_EQ(next.call("procs"),
            "procs " + std::to_string(next.pid()) + ":0:" + std::to_string(1024 * kMiB) + ":self");
  EXPECT_EQ(next.call("job"), "job 0 1");
  // The whole limit, and the lock still taken and given back.
  EXPECT_EQ(next.call(alloc(1024)), "ok");
  EXPECT_EQ(next.call("free"), "ok");
  EXPECT_EQ(next.call(alloc(512)), "ok");
  // The ledger as a reader sees it: one process, holding its 512 MiB.
  uint32_t count = 0;
  ASSERT_EQ(xal_ledger_read(name.c_str(), 0, nullptr, &count), XAL_SUCCESS);
  std::vector<xal_ledger_row_t> rows(count);
  for (auto& r : rows) r.struct_size = sizeof r;
  ASSERT_EQ(xal_ledger_read(name.c_str(), count, rows.data(), &count), XAL_SUCCESS);
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(rows[0].pid, 0);
  EXPECT_EQ(rows[0].processes, 1u);
  EXPECT_EQ(rows[0].memory_bytes, 512 * kMiB);
  EXPECT_EQ(rows[1].pid, next.pid());
  EXPECT_EQ(rows[1].memory_bytes, 512 * kMiB);
  EXPECT_EQ(next.finish("quit"), 0);
}
