// Streams and events: ordering, host functions, NOT_READY while work is
// pending, timing, waits across streams and devices.
#include <atomic>
#include <chrono>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

#include "mock_harness.h"

namespace xal::mock {
namespace {

using test::Instance;
using test::table;

// A gate a host function blocks on until the test opens it.
struct Gate {
  std::latch open{1};
  static void wait(void* self) { static_cast<Gate*>(self)->open.wait(); }
};

struct Log {
  std::mutex mutex;
  std::vector<int> order;
};
struct Entry {
  Log* log;
  int value;
  static void append(void* self) {
    auto* e = static_cast<Entry*>(self);
    std::lock_guard lock(e->log->mutex);
    e->log->order.push_back(e->value);
  }
};

TEST(Stream, RunsInOrderAndQueryReportsPendingWork) {
  Instance inst(R"([{"profile": "l4", "memory": "4MiB"}])");
  xal_bstream_t* s = inst.stream(0);
  EXPECT_EQ(table().stream_query(s), XAL_SUCCESS);
  Gate gate;
  Log log;
  std::vector<Entry> entries;
  for (int i = 0; i < 50; ++i) entries.push_back({&log, i});
  ASSERT_EQ(table().stream_enqueue_host_func(s, Gate::wait, &gate), XAL_SUCCESS);
  const xal_devptr_t p = inst.alloc(0, 4096);
  std::vector<unsigned char> src(4096, 7), back(4096, 0);
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(table().stream_enqueue_host_func(s, Entry::append, &entries[i]), XAL_SUCCESS);
    if (i == 25) {
      ASSERT_EQ(table().memcpy_htod(s, p, src.data(), src.size()), XAL_SUCCESS);
      ASSERT_EQ(table().memcpy_dtoh(s, back.data(), p, back.size()), XAL_SUCCESS);
    }
  }
  EXPECT_EQ(table().stream_query(s), XAL_NOT_READY);
  EXPECT_TRUE(log.order.empty());
  gate.open.count_down();
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(table().stream_query(s), XAL_SUCCESS);
  ASSERT_EQ(log.order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(log.order[i], i);
  EXPECT_EQ(back, src);
  EXPECT_EQ(table().stream_enqueue_host_func(s, nullptr, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

TEST(Stream, DestroyDrainsPendingWork) {
  Instance inst("1*l4");
  xal_bstream_t* s = inst.stream(0);
  std::atomic<int> ran{0};
  auto bump = [](void* p) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    static_cast<std::atomic<int>*>(p)->fetch_add(1);
  };
  for (int i = 0; i < 10; ++i)
    ASSERT_EQ(table().stream_enqueue_host_func(s, bump, &ran), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(ran.load(), 10);
}

TEST(Stream, BadInput) {
  Instance inst("1*l4");
  xal_bstream_t* s = nullptr;
  EXPECT_EQ(table().stream_create(inst.device(0), 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().stream_create(inst.device(0), 0x100, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().stream_create(nullptr, 0, &s), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(table().stream_query(nullptr), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(table().stream_synchronize(nullptr), XAL_ERROR_INVALID_HANDLE);
  ASSERT_EQ(table().stream_create(inst.device(0), XAL_STREAM_NON_BLOCKING, &s), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

TEST(Event, NeverRecordedIsCompleteButHasNoTime) {
  Instance inst("1*l4");
  xal_bevent_t* a = inst.event(0);
  xal_bevent_t* b = inst.event(0);
  EXPECT_EQ(table().event_query(a), XAL_SUCCESS);
  EXPECT_EQ(table().event_synchronize(a), XAL_SUCCESS);
  float ms = -1;
  EXPECT_EQ(table().event_elapsed_ms(a, b, &ms), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("never recorded"), std::string::npos);
  EXPECT_EQ(table().event_destroy(a), XAL_SUCCESS);
  EXPECT_EQ(table().event_destroy(b), XAL_SUCCESS);
}

TEST(Event, RecordQueryElapsed) {
  Instance inst("1*a100-40g");
  xal_bstream_t* s = inst.stream(0);
  xal_bevent_t* start = inst.event(0);
  xal_bevent_t* end = inst.event(0);
  Gate gate;
  ASSERT_EQ(table().event_record(start, s), XAL_SUCCESS);
  ASSERT_EQ(table().stream_enqueue_host_func(s, Gate::wait, &gate), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(end, s), XAL_SUCCESS);
  EXPECT_EQ(table().event_query(end), XAL_NOT_READY);
  float ms = -1;
  EXPECT_EQ(table().event_elapsed_ms(start, end, &ms), XAL_NOT_READY);
  // start is stamped before this returns, end only after the gate opens.
  ASSERT_EQ(table().event_synchronize(start), XAL_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  gate.open.count_down();
  ASSERT_EQ(table().event_synchronize(end), XAL_SUCCESS);
  EXPECT_EQ(table().event_query(end), XAL_SUCCESS);
  EXPECT_EQ(table().event_query(start), XAL_SUCCESS);
  ASSERT_EQ(table().event_elapsed_ms(start, end, &ms), XAL_SUCCESS);
  EXPECT_GE(ms, 4.9f);
  EXPECT_EQ(table().event_elapsed_ms(start, end, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  // Re-recording refers to the latest record.
  ASSERT_EQ(table().event_record(start, s), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  ASSERT_EQ(table().event_elapsed_ms(start, end, &ms), XAL_SUCCESS);
  EXPECT_LE(ms, 0.0f);  // start is now after end
  EXPECT_EQ(table().event_destroy(start), XAL_SUCCESS);
  EXPECT_EQ(table().event_destroy(end), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

TEST(Event, DisableTimingGivesInvalidArgument) {
  Instance inst("1*l4");
  xal_bstream_t* s = inst.stream(0);
  xal_bevent_t* a = inst.event(0, XAL_EVENT_DISABLE_TIMING);
  xal_bevent_t* b = inst.event(0);
  ASSERT_EQ(table().event_record(a, s), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(b, s), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  float ms = 0;
  EXPECT_EQ(table().event_elapsed_ms(a, b, &ms), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("DISABLE_TIMING"), std::string::npos);
  xal_bevent_t* e = nullptr;
  EXPECT_EQ(table().event_create(inst.device(0), 0x40, &e), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().event_create(inst.device(0), 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().event_destroy(a), XAL_SUCCESS);
  EXPECT_EQ(table().event_destroy(b), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

TEST(Event, RecordOnAnotherDevicesStreamIsRefused) {
  Instance inst("2*l4");
  xal_bstream_t* s1 = inst.stream(1);
  xal_bevent_t* e0 = inst.event(0);
  EXPECT_EQ(table().event_record(e0, s1), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().event_destroy(e0), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s1), XAL_SUCCESS);
}

TEST(Event, StreamWaitsForEventOfAnotherDevice) {
  Instance inst(R"([{"profile": "a100-40g", "memory": "4MiB", "count": 2}])");
  xal_bstream_t* s0 = inst.stream(0);
  xal_bstream_t* s1 = inst.stream(1);
  xal_bevent_t* e0 = inst.event(0);
  const xal_devptr_t a = inst.alloc(0, 4096);
  const xal_devptr_t b = inst.alloc(1, 4096);
  Gate gate;
  std::vector<unsigned char> src(4096, 0x42), back(4096, 0);
  // Device 0: (blocked) write a, record e0. Device 1: wait e0, pull a.
  ASSERT_EQ(table().stream_enqueue_host_func(s0, Gate::wait, &gate), XAL_SUCCESS);
  ASSERT_EQ(table().memcpy_htod(s0, a, src.data(), 4096), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(e0, s0), XAL_SUCCESS);
  ASSERT_EQ(table().stream_wait_event(s1, e0), XAL_SUCCESS);
  ASSERT_EQ(table().memcpy_peer(s1, inst.device(1), b, inst.device(0), a, 4096), XAL_SUCCESS);
  ASSERT_EQ(table().memcpy_dtoh(s1, back.data(), b, 4096), XAL_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(table().stream_query(s1), XAL_NOT_READY);
  gate.open.count_down();
  ASSERT_EQ(table().stream_synchronize(s1), XAL_SUCCESS);
  EXPECT_EQ(back, src);
  // Waiting on a never-recorded event is a no-op.
  xal_bevent_t* fresh = inst.event(0);
  ASSERT_EQ(table().stream_wait_event(s1, fresh), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s1), XAL_SUCCESS);
  // An event of another instance is refused.
  Instance other("1*l4");
  xal_bevent_t* foreign = other.event(0);
  EXPECT_EQ(table().stream_wait_event(s1, foreign), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(table().event_destroy(foreign), XAL_SUCCESS);
  EXPECT_EQ(table().event_destroy(fresh), XAL_SUCCESS);
  EXPECT_EQ(table().event_destroy(e0), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s0), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s1), XAL_SUCCESS);
}

// A wait refers to the record made before it: recording the event again on
// an idle stream must not release a wait on the earlier, blocked record.
TEST(Event, WaitKeepsItsRecordWhenTheEventIsRecordedAgain) {
  Instance inst("1*l4");
  xal_bstream_t* a = inst.stream(0);
  xal_bstream_t* b = inst.stream(0);
  xal_bstream_t* c = inst.stream(0);
  xal_bevent_t* e = inst.event(0);
  xal_bevent_t* f = inst.event(0);
  Gate gate;
  Log log;
  Entry on_a{&log, 1}, on_c{&log, 2};
  ASSERT_EQ(table().stream_enqueue_host_func(a, Gate::wait, &gate), XAL_SUCCESS);
  ASSERT_EQ(table().stream_enqueue_host_func(a, Entry::append, &on_a), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(e, a), XAL_SUCCESS);
  ASSERT_EQ(table().stream_wait_event(c, e), XAL_SUCCESS);  // waits for e on a
  ASSERT_EQ(table().stream_enqueue_host_func(c, Entry::append, &on_c), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(f, c), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(e, b), XAL_SUCCESS);  // b is idle
  ASSERT_EQ(table().event_synchronize(e), XAL_SUCCESS);
  EXPECT_EQ(table().event_query(e), XAL_SUCCESS);
  // c must stay blocked; give a wrongly released c the chance to finish.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (table().event_query(f) == XAL_NOT_READY && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
  EXPECT_EQ(table().event_query(f), XAL_NOT_READY);
  EXPECT_EQ(table().stream_query(c), XAL_NOT_READY);
  gate.open.count_down();
  ASSERT_EQ(table().event_synchronize(f), XAL_SUCCESS);
  EXPECT_EQ(log.order, (std::vector<int>{1, 2}));
  for (xal_bevent_t* ev : {e, f}) EXPECT_EQ(table().event_destroy(ev), XAL_SUCCESS);
  for (xal_bstream_t* st : {a, b, c}) EXPECT_EQ(table().stream_destroy(st), XAL_SUCCESS);
}

// Records completing out of order still leave the event's state right.
TEST(Event, RecordsCompletingOutOfOrder) {
  Instance inst("1*l4");
  xal_bstream_t* a = inst.stream(0);
  xal_bstream_t* b = inst.stream(0);
  xal_bevent_t* e = inst.event(0);
  Gate gate;
  ASSERT_EQ(table().stream_enqueue_host_func(a, Gate::wait, &gate), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(e, a), XAL_SUCCESS);  // pending
  ASSERT_EQ(table().event_record(e, b), XAL_SUCCESS);  // completes first
  ASSERT_EQ(table().stream_synchronize(b), XAL_SUCCESS);
  EXPECT_EQ(table().event_query(e), XAL_SUCCESS);  // the latest record counts
  ASSERT_EQ(table().event_record(e, a), XAL_SUCCESS);
  EXPECT_EQ(table().event_query(e), XAL_NOT_READY);
  gate.open.count_down();
  ASSERT_EQ(table().event_synchronize(e), XAL_SUCCESS);
  EXPECT_EQ(table().event_query(e), XAL_SUCCESS);
  EXPECT_EQ(table().event_destroy(e), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(a), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(b), XAL_SUCCESS);
}

TEST(Event, DestroyWhileRecordPendingIsSafe) {
  Instance inst("1*l4");
  xal_bstream_t* s = inst.stream(0);
  xal_bevent_t* e = inst.event(0);
  Gate gate;
  ASSERT_EQ(table().stream_enqueue_host_func(s, Gate::wait, &gate), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(e, s), XAL_SUCCESS);
  EXPECT_EQ(table().event_destroy(e), XAL_SUCCESS);
  gate.open.count_down();
  EXPECT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

}  // namespace
}  // namespace xal::mock
