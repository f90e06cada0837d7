// The ledger's compute-share buckets and usage (layout 3): the bucket's
// arithmetic, an attached process's entry, one bucket for every process of
// the job on a device, published usage and utilization windows, a process
// killed with -9, reading a ledger without joining it, and a ledger of a
// newer layout.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "quota_ledger.hpp"
#include "shared_bucket.hpp"
#include "xal/xal.h"

using xal::core::DeviceUuid;
using xal::core::LedgerRow;
using xal::core::QuotaLedger;
using xal::core::SharedBucket;
namespace layout = xal::core::ledger_layout;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSec = 1'000'000'000;

class LedgerUsageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    name = "xal-usage-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
    std::string error;
    ledger = QuotaLedger::open(name, &error);
    ASSERT_TRUE(ledger) << error;
    slot = ledger->slot(uuid, &error, "Mock card [part 1/2]");
    ASSERT_GE(slot, 0) << error;
  }
  void TearDown() override {
    ledger.reset();
    QuotaLedger::unlink(name);
  }
  std::vector<LedgerRow> rows_at(uint64_t now) { return ledger->rows(now); }

  std::string name;
  std::unique_ptr<QuotaLedger> ledger;
  int slot = -1;
  const DeviceUuid uuid{{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}};
};

}  // namespace

TEST(SharedBucketMath, DebtIsWhatPassedTheShareAndItsBurst) {
  SharedBucket b{};
  const int64_t t = 100 * kSec;
  EXPECT_EQ(xal::core::bucket_debt_ns(b, t), 0);
  // 30%: 5 ms of burst; 35 ms of device time leaves 30 ms of device debt,
  // 100 ms of wall time to wait.
  xal::core::bucket_charge(b, t, 35 * kMs, 0.3, 5 * kMs, kSec);
  EXPECT_NEAR(static_cast<double>(xal::core::bucket_debt_ns(b, t)), 100.0 * kMs, 1e3);
  EXPECT_EQ(b.busy_ns.load(), static_cast<uint64_t>(35 * kMs));
  // Paid back by waiting; an idle time long after keeps only the burst.
  EXPECT_EQ(xal::core::bucket_debt_ns(b, t + 100 * kMs + 1), 0);
  xal::core::bucket_charge(b, t + 10 * kSec, 5 * kMs, 0.3, 5 * kMs, kSec);
  EXPECT_EQ(xal::core::bucket_debt_ns(b, t + 10 * kSec), 0);
  // Debt stops at its maximum (1 s of device time: 3.33 s of wall time).
  xal::core::bucket_charge(b, t + 20 * kSec, 50 * kSec, 0.3, 5 * kMs, kSec);
  EXPECT_NEAR(static_cast<double>(xal::core::bucket_debt_ns(b, t + 20 * kSec)),
              kSec / 0.3, 1e3);
}

TEST_F(LedgerUsageTest, AnAttachedProcessStaysListedWithoutMemory) {
  SharedBucket* b = ledger->attach(slot, 30);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b, &ledger->file()->slots[QuotaLedger::slot_index(slot)].bucket);
  EXPECT_EQ(ledger->usage(slot).processes, 1u);
  xal::core::LedgerUsage u;
  ASSERT_EQ(ledger->reserve(slot, 100, 0, &u), QuotaLedger::Reserve::kOk);
  ledger->release(slot, 100);
  ledger->reset(slot);
  EXPECT_EQ(ledger->usage(slot).processes, 1u);
  ledger->drop(slot);
  EXPECT_EQ(ledger->usage(slot).processes, 0u);
}

TEST_F(LedgerUsageTest, EveryProcessOfTheJobDrawsFromOneBucket) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string e;
    auto mine = QuotaLedger::open(name, &e);
    const int s = mine ? mine->slot(uuid, &e) : -1;
    SharedBucket* b = s >= 0 ? mine->attach(s, 30) : nullptr;
    if (b) xal::core::bucket_charge(*b, 100 * kSec, 35 * kMs, 0.3, 5 * kMs, kSec);
    const char c = b ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1) _exit(2);
    pause();  // killed by the parent, entries and all
    _exit(0);
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  ASSERT_EQ(c, 'y');
  SharedBucket* b = ledger->attach(slot, 30);
  ASSERT_NE(b, nullptr);
  EXPECT_GT(xal::core::bucket_debt_ns(*b, 100 * kSec), 90 * kMs);  // the child's
  EXPECT_EQ(ledger->usage(slot).processes, 2u);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  // Its entry goes; the job's device time keeps what it drew.
  const auto rows = rows_at(100 * kSec);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].pid, 0);
  EXPECT_EQ(rows[0].processes, 1u);
  EXPECT_EQ(rows[0].usage.busy_ns, static_cast<uint64_t>(35 * kMs));
  EXPECT_EQ(rows[1].pid, getpid());
}

TEST_F(LedgerUsageTest, PublishedUsageAndUtilizationAreRead) {
  SharedBucket* b = ledger->attach(slot, 30);
  ASSERT_NE(b, nullptr);
  const uint64_t t = 50 * kSec;
  layout::ProcessUsage u{};
  ledger->publish(slot, u, t);  // windows start
  u.busy_ns = 250 * kMs;
  u.bytes_copied = 4096;
  u.collective_calls = 2;
  u.collective_bytes = 64;
  u.allocations = 3;
  u.errors = 1;
  xal::core::bucket_charge(*b, static_cast<int64_t>(t), 300 * kMs, 0.3, 5 * kMs, kSec);
  ledger->publish(slot, u, t + kSec);
  const auto rows = rows_at(t + kSec + 10 * kMs);
  ASSERT_EQ(rows.size(), 2u);
  const LedgerRow& job = rows[0];
  EXPECT_EQ(job.label, "Mock card [part 1/2]");
  EXPECT_EQ(job.percent, 30u);
  EXPECT_EQ(job.usage.busy_ns, static_cast<uint64_t>(300 * kMs));  // the bucket's
  EXPECT_NEAR(job.utilization, 30.0, 1e-6);
  EXPECT_EQ(job.usage.bytes_copied, 4096u);
  const LedgerRow& me = rows[1];
  EXPECT_EQ(me.pid, getpid());
  EXPECT_EQ(me.usage.busy_ns, static_cast<uint64_t>(250 * kMs));
  EXPECT_NEAR(me.utilization, 25.0, 1e-6);
  EXPECT_EQ(me.usage.collective_calls, 2u);
  EXPECT_EQ(me.usage.collective_bytes, 64u);
  EXPECT_EQ(me.usage.allocations, 3u);
  EXPECT_EQ(me.usage.errors, 1u);
  // Nobody has moved the window on for a while: idle.
  EXPECT_EQ(rows_at(t + 10 * kSec)[0].utilization, 0.0);
}

TEST_F(LedgerUsageTest, AReaderLeavesTheCallersEntriesAndCreatesNothing) {
  ASSERT_NE(ledger->attach(slot, 30), nullptr);
  {
    std::string error;
    auto reader = QuotaLedger::open_existing(name, &error);
    ASSERT_TRUE(reader) << error;
    EXPECT_EQ(reader->rows(1).size(), 2u);
  }
  EXPECT_EQ(ledger->usage(slot).processes, 1u);
  // Through the ABI, which needs no xal_init.
  uint32_t count = 0;
  ASSERT_EQ(xal_ledger_read(name.c_str(), 0, nullptr, &count), XAL_SUCCESS);
  EXPECT_EQ(count, 2u);
  std::vector<xal_ledger_row_t> rows(count);
  for (auto& r : rows) r.struct_size = sizeof r;
  ASSERT_EQ(xal_ledger_read(name.c_str(), count, rows.data(), &count), XAL_SUCCESS);
  EXPECT_STREQ(rows[0].device_name, "Mock card [part 1/2]");
  EXPECT_EQ(rows[0].compute_percent, 30u);
  EXPECT_EQ(rows[1].pid, getpid());
  EXPECT_EQ(std::memcmp(rows[1].uuid, uuid.data(), 16), 0);
  // A ledger that does not exist is not made by reading it.
  const std::string missing = name + "-none";
  std::string error;
  EXPECT_FALSE(QuotaLedger::open_existing(missing, &error));
  EXPECT_NE(error.find("no process of the job runs"), std::string::npos) << error;
  EXPECT_EQ(xal_ledger_read(missing.c_str(), 0, nullptr, &count),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(shm_unlink(QuotaLedger::object_name(missing).c_str()), 0);
}

TEST_F(LedgerUsageTest, ALedgerOfANewerLayoutIsRefused) {
  ledger->file()->header.version = layout::kVersion + 1;
  std::string error;
  bool other = false;
  EXPECT_FALSE(QuotaLedger::open_existing(name, &error, &other));
  EXPECT_TRUE(other);
  EXPECT_NE(error.find("a newer layout, version " + std::to_string(layout::kVersion + 1)),
            std::string::npos) << error;
  EXPECT_NE(error.find("this xal uses version 3"), std::string::npos) << error;
  uint32_t count = 0;
  EXPECT_EQ(xal_ledger_read(name.c_str(), 0, nullptr, &count), XAL_ERROR_ABI_MISMATCH);
  EXPECT_FALSE(QuotaLedger::open(name, &error));
  ledger->file()->header.version = layout::kVersion;
}
