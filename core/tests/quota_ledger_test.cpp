// The shared quota ledger: names, layout, limits, reclaiming dead processes,
// a ledger of another version, a lock whose holder died; and through xal
// (testdev), the job-wide limit seen by two processes.
#include "quota_ledger.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "quota_ledger_worker.hpp"
#include "xal/xal.h"

using xal::core::DeviceUuid;
using xal::core::LedgerUsage;
using xal::core::QuotaLedger;
using xal_test::QuotaWorker;
namespace layout = xal::core::ledger_layout;

namespace {

// A ledger name unique to this process and test; unlinked at the end.
class Ledger : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    name = "xal-test-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
  }
  void TearDown() override { QuotaLedger::unlink(name); }

  std::unique_ptr<QuotaLedger> open() {
    std::string error;
    auto l = QuotaLedger::open(name, &error);
    EXPECT_TRUE(l) << error;
    return l;
  }

  // Creates the shared-memory object by hand: `size` bytes, header as given.
  void forge(size_t size, uint32_t version, uint32_t initialised) {
    const std::string obj = QuotaLedger::object_name(name);
    const int fd = shm_open(obj.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
    if (size >= sizeof(layout::Header)) {
      void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      ASSERT_NE(p, MAP_FAILED);
      auto* h = static_cast<layout::Header*>(p);
      h->magic = layout::kMagic;
      h->version = version;
      h->struct_size = static_cast<uint32_t>(size);
      h->device_count = layout::kMaxDevices;
      h->process_count = layout::kMaxProcesses;
      h->initialised.store(initialised);
      munmap(p, size);
    }
    close(fd);
  }

  std::string name;
  const DeviceUuid uuid_a{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};
  const DeviceUuid uuid_b{{0xaa}};
};

int wait_exit(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_F(Ledger, NamesAreValidated) {
  std::string why;
  EXPECT_TRUE(QuotaLedger::valid_name("job-42_a.b", &why));
  EXPECT_TRUE(QuotaLedger::valid_name(std::string(64, 'x'), &why));
  EXPECT_FALSE(QuotaLedger::valid_name("", &why));
  EXPECT_NE(why.find("empty"), std::string::npos);
  EXPECT_FALSE(QuotaLedger::valid_name(std::string(65, 'x'), &why));
  EXPECT_NE(why.find("at most 64"), std::string::npos);
  EXPECT_FALSE(QuotaLedger::valid_name("a/b", &why));
  EXPECT_NE(why.find("'/'"), std::string::npos);
  EXPECT_FALSE(QuotaLedger::valid_name(std::string("a\nb"), &why));
  EXPECT_NE(why.find("0xa"), std::string::npos);
  std::string error;
  EXPECT_FALSE(QuotaLedger::open("../etc", &error));
  EXPECT_NE(error.find("invalid ledger name '../etc'"), std::string::npos) << error;
  EXPECT_EQ(QuotaLedger::object_name("j"),
            "/xal-ledger-" + std::to_string(getuid()) + "-j");
}

TEST_F(Ledger, LayoutAndSlots) {
  auto l = open();
  ASSERT_TRUE(l);
  const layout::Header& h = l->file()->header;
  EXPECT_EQ(h.magic, layout::kMagic);
  EXPECT_EQ(h.version, layout::kVersion);
  EXPECT_EQ(h.struct_size, sizeof(layout::File));
  EXPECT_EQ(h.initialised.load(), 1u);
  struct stat st {};
  const std::string path = "/dev/shm" + QuotaLedger::object_name(name);
  ASSERT_EQ(stat(path.c_str(), &st), 0) << path;
  EXPECT_EQ(static_cast<size_t>(st.st_size), sizeof(layout::File));
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  std::string error;
  const int a = l->slot(uuid_a, &error);
  const int b = l->slot(uuid_b, &error);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  EXPECT_NE(a, b);
  EXPECT_EQ(l->slot(uuid_a, &error), a);
  // A second opening (as another process would) sees the same table.
  auto again = open();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->slot(uuid_b, &error), b);
  // The table is full after kMaxDevices uuids with a live entry each.
  EXPECT_TRUE(l->set_limit(a, 1));
  EXPECT_TRUE(l->set_limit(b, 1));
  for (uint32_t i = 0; i < layout::kMaxDevices; ++i) {
    DeviceUuid u{{0x55, static_cast<uint8_t>(i), 0x77}};
    const int s = l->slot(u, &error);
    if (s < 0) break;
    EXPECT_TRUE(l->set_limit(s, 1));
  }
  DeviceUuid extra{{0x66}};
  EXPECT_EQ(l->slot(extra, &error), -1);
  EXPECT_NE(error.find("64 devices"), std::string::npos) << error;
}

TEST_F(Ledger, ASlotLeftWithoutEntriesIsReused) {
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  std::vector<int> handles;
  for (uint32_t i = 0; i < layout::kMaxDevices; ++i) {
    DeviceUuid u{{0x55, static_cast<uint8_t>(i), 0x77}};
    handles.push_back(l->slot(u, &error));
    ASSERT_GE(handles.back(), 0) << error;
    EXPECT_TRUE(l->set_limit(handles.back(), 1000));
  }
  // A child takes an entry in slot 3 and exits without freeing; slot 5
  // loses its only entry.
  const int three = handles[3], five = handles[5];
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string e;
    auto mine = QuotaLedger::open(name, &e);
    LedgerUsage u;
    _exit(mine && mine->reserve(three, 10, 0, &u) == QuotaLedger::Reserve::kOk ? 0 : 1);
  }
  EXPECT_EQ(wait_exit(child), 0);
  EXPECT_TRUE(l->set_limit(three, 0));  // left: the dead child's entry
  EXPECT_TRUE(l->set_limit(five, 0));
  const DeviceUuid extra{{0x66}}, more{{0x67}}, last{{0x68}};
  const int e1 = l->slot(extra, &error);
  const int e2 = l->slot(more, &error);
  ASSERT_GE(e1, 0) << error;
  ASSERT_GE(e2, 0) << error;
  EXPECT_EQ(QuotaLedger::slot_index(e1), QuotaLedger::slot_index(three));
  EXPECT_EQ(QuotaLedger::slot_index(e2), QuotaLedger::slot_index(five));
  EXPECT_NE(e1, three);
  EXPECT_EQ(l->slot(extra, &error), e1);
  EXPECT_EQ(l->usage(e1).used, 0u) << "the dead child's bytes went with its entry";
  // The old handles are stale: nothing done through them reaches the slot.
  LedgerUsage u;
  EXPECT_TRUE(l->set_limit(e2, 1000));
  EXPECT_EQ(l->reserve(three, 10, 0, &u), QuotaLedger::Reserve::kStale);
  EXPECT_EQ(l->update_limit(five, 10, false, &u), QuotaLedger::SetLimit::kStale);
  EXPECT_FALSE(l->set_limit(five, 10));
  bool stale = false;
  EXPECT_EQ(l->usage(three, &stale).used, 0u);
  EXPECT_TRUE(stale);
  EXPECT_TRUE(l->processes(five, &stale).empty());
  EXPECT_TRUE(stale);
  l->release(three, 1);
  l->drop(five);
  EXPECT_EQ(l->reserve(e1, 10, 0, &u), QuotaLedger::Reserve::kOk);
  EXPECT_EQ(l->usage(e1, &stale).used, 10u);
  EXPECT_FALSE(stale);
  EXPECT_EQ(l->usage(e2).processes, 1u);
  EXPECT_EQ(l->usage(e2).limit, 1000u);
  // Every slot has a live entry now.
  EXPECT_EQ(l->slot(last, &error), -1);
  EXPECT_NE(error.find("64 devices with live processes"), std::string::npos) << error;
}

TEST_F(Ledger, ReserveWithinLimitAndRelease) {
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid_a, &error);
  LedgerUsage u;
  EXPECT_EQ(l->reserve(s, 600, 1000, &u), QuotaLedger::Reserve::kOk);
  EXPECT_EQ(u.used, 0u);
  EXPECT_EQ(l->reserve(s, 500, 1000, &u), QuotaLedger::Reserve::kOverLimit);
  EXPECT_EQ(u.used, 600u);
  EXPECT_EQ(u.own, 600u);
  EXPECT_EQ(u.limit, 1000u);
  EXPECT_EQ(u.processes, 1u);
  EXPECT_EQ(l->reserve(s, 400, 1000, &u), QuotaLedger::Reserve::kOk);
  EXPECT_EQ(l->usage(s).used, 1000u);
  l->release(s, 600);
  EXPECT_EQ(l->usage(s).used, 400u);
  l->reset(s);
  EXPECT_EQ(l->usage(s).used, 0u);
  // Without a limit, use is still recorded.
  EXPECT_TRUE(l->set_limit(s, 0));
  EXPECT_EQ(l->reserve(s, 5000, 0, &u), QuotaLedger::Reserve::kOk);
  EXPECT_EQ(l->usage(s).used, 5000u);
  EXPECT_EQ(l->usage(s).limit, 0u);
  // Releasing more than held stops at 0.
  l->release(s, 9000);
  EXPECT_EQ(l->usage(s).used, 0u);
  // Closing removes this process's entries.
  EXPECT_TRUE(l->set_limit(s, 123));
  auto other = open();
  EXPECT_EQ(other->usage(s).limit, 123u);
  l.reset();
  EXPECT_EQ(other->usage(s).limit, 0u);
}

TEST_F(Ledger, ReclaimsAProcessThatExitedWithoutFreeing) {
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid_a, &error);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string e;
    auto mine = QuotaLedger::open(name, &e);
    LedgerUsage u;
    const bool ok = mine && mine->reserve(s, 700, 1000, &u) == QuotaLedger::Reserve::kOk;
    char c = ok ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    _exit(0);  // no destructor: the entry stays behind
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  EXPECT_EQ(c, 'y');
  // Wait for the exit but leave the zombie: it counts as dead already.
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  {
    QuotaLedger::Guard g(*l);
    bool found = false;
    for (const auto& e : l->file()->slots[QuotaLedger::slot_index(s)].processes)
      found |= e.pid == child && e.bytes == 700;
    EXPECT_TRUE(found) << "the child's entry is in the table until reclaimed";
  }
  LedgerUsage u;
  EXPECT_EQ(l->reserve(s, 900, 1000, &u), QuotaLedger::Reserve::kOk);
  EXPECT_EQ(u.used, 0u);
  EXPECT_EQ(u.processes, 1u);
  EXPECT_EQ(wait_exit(child), 0);
}

TEST_F(Ledger, AReusedPidIsNotMistakenForItsFormerProcess) {
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid_a, &error);
  uint64_t start = 0;
  bool zombie = true;
  ASSERT_TRUE(xal::core::process_start_time(getpid(), &start, &zombie));
  EXPECT_FALSE(zombie);
  {
    // An entry with this (live) pid but another start time.
    QuotaLedger::Guard g(*l);
    layout::DeviceSlot& d = l->file()->slots[QuotaLedger::slot_index(s)];
    d.processes[5] = layout::ProcessEntry{getpid(), 0, start + 1, 800, 900};
    d.high_water = 6;
  }
  const LedgerUsage u = l->usage(s);
  EXPECT_EQ(u.used, 0u);
  EXPECT_EQ(u.limit, 0u);
  EXPECT_EQ(l->reclaim(), 0u);
}

TEST_F(Ledger, TheSmallestLimitOfALiveProcessIsInForce) {
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid_a, &error);
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 1;
    {
      std::string e;
      auto mine = QuotaLedger::open(name, &e);
      LedgerUsage u;
      if (mine && mine->set_limit(s, 500) &&
          mine->reserve(s, 100, 500, &u) == QuotaLedger::Reserve::kOk) {
        char c = 'y';
        (void)!write(ready[1], &c, 1);
        (void)!read(go[0], &c, 1);
        code = 0;
      }
    }  // closing removes the entry
    _exit(code);
  }
  close(ready[1]);
  close(go[0]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  LedgerUsage u;
  // This process allows 1000, the other 500: 500 is in force.
  EXPECT_TRUE(l->set_limit(s, 1000));
  EXPECT_EQ(l->reserve(s, 450, 1000, &u), QuotaLedger::Reserve::kOverLimit);
  EXPECT_EQ(u.limit, 500u);
  EXPECT_EQ(u.used, 100u);
  EXPECT_EQ(u.processes, 2u);
  EXPECT_EQ(l->reserve(s, 400, 1000, &u), QuotaLedger::Reserve::kOk);
  // Raising this process's own limit does not raise the job's.
  EXPECT_TRUE(l->set_limit(s, 5000));
  EXPECT_EQ(l->usage(s).limit, 500u);
  ASSERT_EQ(write(go[1], &c, 1), 1);
  EXPECT_EQ(wait_exit(child), 0);
  close(ready[0]);
  close(go[1]);
  u = l->usage(s);
  EXPECT_EQ(u.limit, 5000u);
  EXPECT_EQ(u.used, 400u);
  EXPECT_EQ(u.processes, 1u);
}

TEST_F(Ledger, ALockHeldByADeadProcessIsRecovered) {
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid_a, &error);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string e;
    auto mine = QuotaLedger::open(name, &e);
    if (!mine) _exit(1);
    alignas(QuotaLedger::Guard) unsigned char space[sizeof(QuotaLedger::Guard)];
    new (space) QuotaLedger::Guard(*mine);  // never released
    _exit(0);
  }
  EXPECT_EQ(wait_exit(child), 0);
  LedgerUsage u;
  EXPECT_EQ(l->reserve(s, 10, 0, &u), QuotaLedger::Reserve::kOk);
  EXPECT_EQ(l->recoveries(), 1u);
  EXPECT_EQ(l->usage(s).used, 10u);
}

TEST_F(Ledger, ALedgerOfAnotherVersionIsRefused) {
  forge(sizeof(layout::File), 99, 1);
  std::string error;
  EXPECT_FALSE(QuotaLedger::open(name, &error));
  EXPECT_NE(error.find("version 99"), std::string::npos) << error;
  EXPECT_NE(error.find("this xal uses version " + std::to_string(layout::kVersion)),
            std::string::npos) << error;
}

TEST_F(Ledger, ALedgerOfAnotherSizeIsRefused) {
  forge(sizeof(layout::Header) + 64, layout::kVersion, 1);
  std::string error;
  EXPECT_FALSE(QuotaLedger::open(name, &error));
  EXPECT_NE(error.find("size"), std::string::npos) << error;
}

TEST_F(Ledger, ATruncatedLedgerIsRefused) {
  forge(8, layout::kVersion, 1);
  std::string error;
  EXPECT_FALSE(QuotaLedger::open(name, &error));
  EXPECT_NE(error.find("too small"), std::string::npos) << error;
}

TEST_F(Ledger, ALedgerNeverInitialisedIsRefused) {
  forge(sizeof(layout::File), layout::kVersion, 0);
  std::string error;
  EXPECT_FALSE(QuotaLedger::open(name, &error));
  EXPECT_NE(error.find("never initialised"), std::string::npos) << error;
}

TEST_F(Ledger, ConcurrentOpeningsShareOneLedger) {
  constexpr int kChildren = 4;
  pid_t children[kChildren];
  for (pid_t& child : children) {
    child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      std::string e;
      auto mine = QuotaLedger::open(name, &e);
      if (!mine) _exit(1);
      const int s = mine->slot(uuid_a, &e);
      LedgerUsage u;
      if (s < 0 || mine->reserve(s, 1, 0, &u) != QuotaLedger::Reserve::kOk) _exit(2);
      _exit(0);  // entries stay: counted below before reclaiming
    }
  }
  for (pid_t child : children) EXPECT_EQ(wait_exit(child), 0);
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid_a, &error);
  {
    QuotaLedger::Guard g(*l);
    uint64_t total = 0;
    for (const auto& e : l->file()->slots[QuotaLedger::slot_index(s)].processes) total += e.bytes;
    EXPECT_EQ(total, uint64_t{kChildren});
  }
  EXPECT_EQ(l->reclaim(), uint32_t{kChildren});
}

// An entry of a live process other than this one (pid 1), holding `bytes`.
void add_other_process(QuotaLedger& l, int slot, uint64_t bytes, uint64_t limit) {
  uint64_t start = 0;
  bool zombie = false;
  ASSERT_TRUE(xal::core::process_start_time(1, &start, &zombie));
  QuotaLedger::Guard g(l);
  layout::DeviceSlot& d = l.file()->slots[QuotaLedger::slot_index(slot)];
  d.processes[0] = layout::ProcessEntry{1, 0, start, bytes, limit};
  d.high_water = std::max(d.high_water, 1u);
}

TEST_F(Ledger, AFailedReservationLeavesNoEntryBehind) {
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid_a, &error);
  add_other_process(*l, s, 600, 1000);
  LedgerUsage u;
  EXPECT_EQ(l->reserve(s, 500, 0, &u), QuotaLedger::Reserve::kOverLimit);
  EXPECT_EQ(u.used, 600u);
  EXPECT_EQ(u.limit, 1000u);
  EXPECT_EQ(u.processes, 1u) << "this process holds nothing and is not counted";
  const auto procs = l->processes(s);
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].pid, 1);
  // Its own limit too: the refused reservation publishes nothing.
  EXPECT_EQ(l->reserve(s, 2000, 1500, &u), QuotaLedger::Reserve::kOverLimit);
  EXPECT_EQ(u.processes, 1u);
  EXPECT_EQ(l->processes(s).size(), 1u);
  // An entry that already existed stays, with what it holds.
  EXPECT_EQ(l->reserve(s, 100, 0, &u), QuotaLedger::Reserve::kOk);
  EXPECT_EQ(l->reserve(s, 400, 0, &u), QuotaLedger::Reserve::kOverLimit);
  EXPECT_EQ(u.processes, 2u);
  EXPECT_EQ(l->usage(s).own, 100u);
}

TEST_F(Ledger, ReserveKeepsTheLimitSetLimitRecorded) {
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid_a, &error);
  EXPECT_TRUE(l->set_limit(s, 500));
  LedgerUsage u;
  // 1000: this process's limit as read before set_limit changed it.
  EXPECT_EQ(l->reserve(s, 100, 1000, &u), QuotaLedger::Reserve::kOk);
  EXPECT_EQ(l->usage(s).limit, 500u);
  EXPECT_EQ(l->reserve(s, 450, 1000, &u), QuotaLedger::Reserve::kOverLimit);
  EXPECT_EQ(u.limit, 500u);
  // A new entry takes the limit given.
  l->reset(s);
  EXPECT_TRUE(l->set_limit(s, 0));
  EXPECT_EQ(l->reserve(s, 100, 300, &u), QuotaLedger::Reserve::kOk);
  EXPECT_EQ(l->usage(s).limit, 300u);
}

TEST_F(Ledger, ALimitBelowTheJobsUseIsRefusedUnderTheLock) {
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid_a, &error);
  add_other_process(*l, s, 600, 0);
  LedgerUsage u;
  EXPECT_EQ(l->update_limit(s, 500, true, &u), QuotaLedger::SetLimit::kBelowUse);
  EXPECT_EQ(u.used, 600u);
  EXPECT_EQ(l->usage(s).limit, 0u);
  EXPECT_EQ(l->processes(s).size(), 1u);
  EXPECT_EQ(l->update_limit(s, 600, true, &u), QuotaLedger::SetLimit::kOk);
  EXPECT_EQ(l->usage(s).limit, 600u);
  EXPECT_EQ(l->update_limit(s, 0, true, &u), QuotaLedger::SetLimit::kOk);
  EXPECT_EQ(l->usage(s).limit, 0u);
  EXPECT_EQ(l->processes(s).size(), 1u);
}

TEST_F(Ledger, UpdateLimitCommitsTheOwnLimitUnderTheLock) {
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid_a, &error);
  std::atomic<uint64_t> own{0};
  int commits = 0;
  auto to = [&](uint64_t v, bool accept) {
    return [&, v, accept] {
      ++commits;
      if (accept) own.store(v);
      return accept;
    };
  };
  EXPECT_EQ(l->update_limit(s, 500, true, nullptr, to(500, true)),
            QuotaLedger::SetLimit::kOk);
  EXPECT_EQ(own.load(), 500u);
  EXPECT_EQ(l->usage(s).limit, 500u);
  // Refused by the commit: the ledger keeps the limit it had.
  EXPECT_EQ(l->update_limit(s, 200, true, nullptr, to(200, false)),
            QuotaLedger::SetLimit::kRefused);
  EXPECT_EQ(l->usage(s).limit, 500u);
  // Refused by the job's use: the commit does not run.
  add_other_process(*l, s, 300, 0);
  EXPECT_EQ(l->update_limit(s, 250, true, nullptr, to(250, true)),
            QuotaLedger::SetLimit::kBelowUse);
  EXPECT_EQ(commits, 2);
  EXPECT_EQ(own.load(), 500u);
  // A reservation reads the own limit when it holds the lock: once the
  // limit is removed, an entry made afterwards has none.
  EXPECT_EQ(l->update_limit(s, 0, true, nullptr, to(0, true)), QuotaLedger::SetLimit::kOk);
  EXPECT_EQ(l->reserve(s, 100, own, nullptr), QuotaLedger::Reserve::kOk);
  l->release(s, 100);
  EXPECT_EQ(l->usage(s).limit, 0u);
  EXPECT_EQ(l->processes(s).size(), 1u);  // the other process's alone
  // publish_limit records a limit read under the lock, and not 0.
  own.store(700);
  EXPECT_EQ(l->publish_limit(s, own), QuotaLedger::SetLimit::kOk);
  EXPECT_EQ(l->usage(s).limit, 700u);
  own.store(0);
  EXPECT_EQ(l->publish_limit(s, own), QuotaLedger::SetLimit::kOk);
  EXPECT_EQ(l->usage(s).limit, 700u);
}

// A slot given to a new uuid takes the next generation, so every handle to
// it from before is stale; the count never restarts for a used slot.
TEST_F(Ledger, AReusedSlotsOldHandlesStayStale) {
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  std::vector<int> first;
  for (uint32_t i = 0; i < layout::kMaxDevices; ++i) {
    const DeviceUuid u{{0x42, static_cast<uint8_t>(i)}};
    first.push_back(l->slot(u, &error));
    ASSERT_GE(first.back(), 0) << error;
  }
  // The table is full and no slot has an entry: the oldest is reused.
  const int reused = l->slot(uuid_a, &error);
  ASSERT_GE(reused, 0) << error;
  const uint32_t index = QuotaLedger::slot_index(reused);
  EXPECT_EQ(QuotaLedger::slot_index(first[index]), index);
  EXPECT_NE(reused, first[index]);
  EXPECT_EQ(l->reserve(first[index], 1, 0, nullptr), QuotaLedger::Reserve::kStale);
  EXPECT_EQ(l->update_limit(first[index], 5, false, nullptr),
            QuotaLedger::SetLimit::kStale);
  const layout::DeviceSlot& d = l->file()->slots[index];
  EXPECT_EQ(d.in_use, 2u);
  EXPECT_EQ(std::memcmp(d.uuid, uuid_a.data(), 16), 0);
  EXPECT_EQ(d.high_water, 0u);
  EXPECT_EQ(d.limit, 0u);
}

// A creator that cannot map the new object removes it: the next process
// makes its own instead of waiting for one that is never initialised.
TEST_F(Ledger, ACreatorThatCannotMapTheLedgerRemovesIt) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer maps memory of its own under the limit";
#endif
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Address space for small allocations, not for the ledger's mapping.
    unsigned long pages = 0;
    std::ifstream statm("/proc/self/statm");
    if (!(statm >> pages)) _exit(3);
    rlimit small{};
    small.rlim_cur = small.rlim_max =
        pages * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (64u << 10);
    if (setrlimit(RLIMIT_AS, &small) != 0) _exit(3);
    std::string error;
    const bool opened = QuotaLedger::open(name, &error) != nullptr;
    _exit(opened ? 1 : error.find("cannot map") != std::string::npos ? 0 : 2);
  }
  EXPECT_EQ(wait_exit(child), 0);
  const std::string obj = QuotaLedger::object_name(name);
  const int fd = shm_open(obj.c_str(), O_RDWR, 0);
  EXPECT_LT(fd, 0) << "the unmapped ledger is still there";
  if (fd >= 0) close(fd);
  auto l = open();
  EXPECT_TRUE(l);
}

TEST_F(Ledger, ALedgerOpenToOthersIsRefused) {
  auto l = open();
  ASSERT_TRUE(l);
  const std::string obj = QuotaLedger::object_name(name);
  const int fd = shm_open(obj.c_str(), O_RDWR, 0);
  ASSERT_GE(fd, 0);
  for (mode_t mode : {0666, 0640, 0604}) {
    ASSERT_EQ(fchmod(fd, mode), 0);
    std::string error;
    EXPECT_FALSE(QuotaLedger::open(name, &error)) << std::oct << mode;
    std::ostringstream want;
    want << "with mode 0" << std::oct << mode;
    EXPECT_NE(error.find(want.str()), std::string::npos) << error;
    EXPECT_NE(error.find("must belong to this user"), std::string::npos) << error;
  }
  ASSERT_EQ(fchmod(fd, 0600), 0);
  std::string error;
  EXPECT_TRUE(QuotaLedger::open(name, &error)) << error;
  if (geteuid() == 0) {  // only root can give it away
    ASSERT_EQ(fchown(fd, 65534, static_cast<gid_t>(-1)), 0);
    EXPECT_FALSE(QuotaLedger::open(name, &error));
    EXPECT_NE(error.find("belongs to uid 65534"), std::string::npos) << error;
  }
  close(fd);
}

// Through xal, with testdev's cards: two processes of one job.
class SharedQuota : public Ledger {
 protected:
  void SetUp() override {
    Ledger::SetUp();
    setenv("XAL_BACKENDS", XAL_TESTDEV_PLUGIN, 1);
    setenv("XAL_MEMORY_LIMIT", "1MiB", 1);
    setenv("XAL_QUOTA_LEDGER", name.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("XAL_BACKENDS");
    unsetenv("XAL_MEMORY_LIMIT");
    unsetenv("XAL_QUOTA_LEDGER");
    Ledger::TearDown();
  }
};

TEST_F(SharedQuota, TwoProcessesShareTheLimit) {
  QuotaWorker a, b;
  ASSERT_EQ(a.greeting(), "ready");
  ASSERT_EQ(b.greeting(), "ready");
  EXPECT_EQ(a.call("alloc 524288"), "ok");
  EXPECT_EQ(b.call("info"), "info 524288 1048576");
  const std::string over = b.call("alloc 786432");
  EXPECT_EQ(over.rfind("err XAL_ERROR_OUT_OF_MEMORY", 0), 0u) << over;
  EXPECT_NE(over.find("job-wide memory limit of 1.00 MiB"), std::string::npos) << over;
  EXPECT_NE(over.find("512.00 KiB in use by 2 processes"), std::string::npos) << over;
  EXPECT_EQ(b.call("alloc 262144"), "ok");
  // A limit below what the job uses is refused.
  const std::string low = b.call("limit 524288");
  EXPECT_NE(low.find("the job already uses 786432 bytes"), std::string::npos) << low;
  // Free and reset give the share back.
  EXPECT_EQ(a.call("free"), "ok");
  EXPECT_EQ(b.call("info"), "info 786432 1048576");
  EXPECT_EQ(b.call("reset"), "ok");
  EXPECT_EQ(a.call("info"), "info 1048576 1048576");
  // A smaller limit set by one process binds the other.
  EXPECT_EQ(a.call("limit 262144"), "ok");
  EXPECT_EQ(b.call("info"), "info 262144 262144");
  EXPECT_EQ(b.call("metrics"), "limit 262144");
  EXPECT_EQ(b.call("alloc 524288").rfind("err XAL_ERROR_OUT_OF_MEMORY", 0), 0u);
  EXPECT_EQ(a.finish("quit"), 0);
  EXPECT_EQ(b.call("info"), "info 1048576 1048576");
  EXPECT_EQ(b.call("alloc 524288"), "ok");
  EXPECT_EQ(b.finish("quit"), 0);
}

// A process without a limit of its own (as xal-smi) sees the job's.
TEST_F(SharedQuota, AProcessWithoutALimitSeesTheJobs) {
  QuotaWorker a;
  ASSERT_EQ(a.greeting(), "ready");
  EXPECT_EQ(a.call("alloc 262144"), "ok");
  unsetenv("XAL_MEMORY_LIMIT");
  QuotaWorker smi;
  ASSERT_EQ(smi.greeting(), "ready");
  EXPECT_EQ(smi.call("metrics"), "limit 1048576");
  EXPECT_EQ(smi.call("info"), "info 786432 1048576");
  // The job's use as the metrics give it: a's allocation, in 1 process
  // (smi holds neither memory nor a limit, so it has no entry).
  EXPECT_EQ(smi.call("job"), "job 262144 1");
  EXPECT_EQ(a.call("alloc 131072"), "ok");
  EXPECT_EQ(smi.call("job"), "job 393216 1");
  EXPECT_EQ(smi.call("procs"), "procs " + std::to_string(a.pid()) + ":393216:1048576");
  EXPECT_EQ(a.call("procs"), "procs " + std::to_string(a.pid()) + ":393216:1048576:self");
  EXPECT_EQ(a.finish("quit"), 0);
  EXPECT_EQ(smi.call("metrics"), "limit 0");
  EXPECT_EQ(smi.call("job"), "job 0 0");
  EXPECT_EQ(smi.call("procs"), "procs");
}

TEST_F(SharedQuota, ABadLedgerNameLeavesQuotasPerProcess) {
  setenv("XAL_QUOTA_LEDGER", "no/slashes", 1);
  QuotaWorker a, b;
  ASSERT_EQ(a.greeting(), "ready");
  ASSERT_EQ(b.greeting(), "ready");
  EXPECT_EQ(a.call("alloc 786432"), "ok");
  EXPECT_EQ(b.call("alloc 786432"), "ok");
  const std::string over = b.call("alloc 524288");
  EXPECT_NE(over.find("would pass its memory limit"), std::string::npos) << over;
}

TEST_F(SharedQuota, AnIncompatibleLedgerLeavesQuotasPerProcess) {
  forge(sizeof(layout::File), 7, 1);
  QuotaWorker a;
  ASSERT_EQ(a.greeting(), "ready");
  EXPECT_EQ(a.call("alloc 786432"), "ok");
  EXPECT_EQ(a.call("info"), "info 262144 1048576");
  EXPECT_EQ(a.call("job"), "job none");
  const std::string procs = a.call("procs");
  EXPECT_EQ(procs.rfind("err XAL_ERROR_NOT_SUPPORTED", 0), 0u) << procs;
  EXPECT_NE(procs.find("XAL_QUOTA_LEDGER=NAME"), std::string::npos) << procs;
}

TEST_F(SharedQuota, ALedgerOpenToOthersLeavesQuotasPerProcess) {
  {
    auto l = open();
    ASSERT_TRUE(l);
  }
  const int fd = shm_open(QuotaLedger::object_name(name).c_str(), O_RDWR, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(fchmod(fd, 0666), 0);
  close(fd);
  QuotaWorker a;
  ASSERT_EQ(a.greeting(), "ready");
  EXPECT_EQ(a.call("job"), "job none");
  EXPECT_EQ(a.call("alloc 786432"), "ok");
  EXPECT_EQ(a.call("info"), "info 262144 1048576");
}

// In this process: a partition's limit leaves the ledger with the
// partition, so a partition made later with the same layout (the same uuid)
// does not inherit it.
TEST_F(SharedQuota, AnUndonePartitionLeavesNothingInTheLedger) {
  ASSERT_EQ(xal_init(nullptr), XAL_SUCCESS);
  xal_device_t card = nullptr;
  ASSERT_EQ(xal_device_get(0, &card), XAL_SUCCESS);
  xal_partition_desc_t descs[2]{};
  for (auto& d : descs) {
    d.struct_size = sizeof d;
    d.memory_bytes = 262144;
  }
  xal_device_t parts[2]{};
  ASSERT_EQ(xal_device_partition(card, 2, descs, parts), XAL_SUCCESS);
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(xal_device_get_properties(parts[0], &p), XAL_SUCCESS);
  DeviceUuid uuid{};
  std::copy(std::begin(p.uuid), std::end(p.uuid), uuid.begin());
  xal_devptr_t ptr = 0;
  ASSERT_EQ(xal_mem_alloc(parts[0], 4096, &ptr), XAL_SUCCESS);
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid, &error);
  ASSERT_GE(s, 0) << error;
  EXPECT_EQ(l->usage(s).limit, 262144u);
  EXPECT_EQ(l->usage(s).used, 4096u);
  ASSERT_EQ(xal_mem_free(parts[0], ptr), XAL_SUCCESS);
  ASSERT_EQ(xal_device_unpartition(card), XAL_SUCCESS);
  const LedgerUsage u = l->usage(s);
  EXPECT_EQ(u.limit, 0u);
  EXPECT_EQ(u.used, 0u);
  EXPECT_EQ(u.processes, 0u);
  EXPECT_TRUE(l->processes(s).empty());
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}

// The uuid xal gives `dev`, as the ledger's slots are keyed.
bool uuid_of(xal_device_t dev, DeviceUuid* out) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  if (xal_device_get_properties(dev, &p) != XAL_SUCCESS) return false;
  std::copy(std::begin(p.uuid), std::end(p.uuid), out->begin());
  return true;
}

// In this process: a device whose ledger slot went to another uuid (this
// process had nothing in it) is looked up again at its next allocation.
TEST_F(SharedQuota, ADeviceWhoseSlotWasReusedIsLookedUpAgain) {
  unsetenv("XAL_MEMORY_LIMIT");
  ASSERT_EQ(xal_init(nullptr), XAL_SUCCESS);
  xal_device_t dev = nullptr;
  ASSERT_EQ(xal_device_get(0, &dev), XAL_SUCCESS);
  DeviceUuid uuid{};
  ASSERT_TRUE(uuid_of(dev, &uuid));
  auto l = open();
  ASSERT_TRUE(l);
  // Fill the table with uuids holding a limit: xal's slots (no entries) go
  // to the last ones.
  std::string error;
  std::vector<int> others;
  for (uint32_t i = 0; i < layout::kMaxDevices; ++i) {
    const DeviceUuid u{{0x55, static_cast<uint8_t>(i), 0x77}};
    const int s = l->slot(u, &error);
    ASSERT_GE(s, 0) << error;
    EXPECT_TRUE(l->set_limit(s, 1 << 30));
    others.push_back(s);
  }
  EXPECT_EQ(l->slot(uuid, &error), -1);
  EXPECT_TRUE(l->set_limit(others.front(), 0));  // one slot to take
  xal_devptr_t ptr = 0;
  ASSERT_EQ(xal_mem_alloc(dev, 4096, &ptr), XAL_SUCCESS);
  const int mine = l->slot(uuid, &error);
  ASSERT_GE(mine, 0) << error;
  EXPECT_EQ(l->usage(mine).used, 4096u);
  for (int s : others) EXPECT_EQ(l->usage(s).used, 0u) << s;
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_EQ(xal_device_get_metrics(dev, &m), XAL_SUCCESS);
  EXPECT_EQ(m.job_memory_used_bytes, 4096u);
  ASSERT_EQ(xal_mem_free(dev, ptr), XAL_SUCCESS);
  EXPECT_EQ(l->usage(mine).used, 0u);
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}

// A limit removed while another thread allocates stays removed: the
// allocation that makes this process's entry takes the limit in force when
// it holds the ledger's lock, not one it read before.
TEST_F(SharedQuota, ARemovedLimitIsNotBroughtBackByAConcurrentAllocation) {
  unsetenv("XAL_MEMORY_LIMIT");
  ASSERT_EQ(xal_init(nullptr), XAL_SUCCESS);
  xal_device_t dev = nullptr;
  ASSERT_EQ(xal_device_get(0, &dev), XAL_SUCCESS);
  DeviceUuid uuid{};
  ASSERT_TRUE(uuid_of(dev, &uuid));
  auto l = open();
  ASSERT_TRUE(l);
  std::string error;
  const int s = l->slot(uuid, &error);
  ASSERT_GE(s, 0) << error;
  std::atomic<bool> done{false};
  std::thread allocator([&] {
    while (!done.load()) {
      xal_devptr_t ptr = 0;
      if (xal_mem_alloc(dev, 4096, &ptr) == XAL_SUCCESS) {
        EXPECT_EQ(xal_mem_free(dev, ptr), XAL_SUCCESS);
      }
    }
  });
  int stale = 0;
  for (int i = 0; i < 50000; ++i) {
    ASSERT_EQ(xal_device_set_memory_limit(dev, 1 << 20), XAL_SUCCESS);
    ASSERT_EQ(xal_device_set_memory_limit(dev, 0), XAL_SUCCESS);
    for (const auto& e : l->processes(s)) stale += e.self && e.limit != 0;
  }
  done.store(true);
  allocator.join();
  EXPECT_EQ(stale, 0);
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}
