// Several threads allocating, copying, recording and freeing on shared
// devices of one instance at once.
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "mock_harness.h"

namespace xal::mock {
namespace {

using test::Instance;
using test::table;

TEST(Concurrency, ThreadsShareDevices) {
  Instance inst(R"([{"profile": "a100-40g", "memory": "64MiB", "count": 2}])");
  constexpr int kThreads = 6;
  constexpr int kIterations = 150;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      const uint32_t dev = static_cast<uint32_t>(t % 2);
      xal_bdevice_t* d = inst.device(dev);
      xal_bdevice_t* other = inst.device(1 - dev);
      xal_bstream_t* s = nullptr;
      xal_bevent_t* e = nullptr;
      if (table().stream_create(d, 0, &s) != XAL_SUCCESS ||
          table().event_create(d, 0, &e) != XAL_SUCCESS) {
        ++failures;
        return;
      }
      for (int i = 0; i < kIterations; ++i) {
        const size_t n = 1 + rng() % (256 * 1024);
        xal_devptr_t a = 0, b = 0;
        if (table().mem_alloc(d, n, &a) != XAL_SUCCESS ||
            table().mem_alloc(other, n, &b) != XAL_SUCCESS) {
          ++failures;
          break;
        }
        std::vector<unsigned char> src(n), back(n);
        for (size_t k = 0; k < n; k += 61) src[k] = static_cast<unsigned char>(k + t + i);
        bool ok = table().memcpy_htod(s, a, src.data(), n) == XAL_SUCCESS &&
                  table().memcpy_peer(s, other, b, d, a, n) == XAL_SUCCESS &&
                  table().memset(s, a, 0, n) == XAL_SUCCESS &&
                  table().memcpy_peer(s, d, a, other, b, n) == XAL_SUCCESS &&
                  table().memcpy_dtoh(s, back.data(), a, n) == XAL_SUCCESS &&
                  table().event_record(e, s) == XAL_SUCCESS &&
                  table().event_synchronize(e) == XAL_SUCCESS;
        ok = ok && std::memcmp(src.data(), back.data(), n) == 0;
        ok = ok && table().mem_free(d, a) == XAL_SUCCESS &&
             table().mem_free(other, b) == XAL_SUCCESS;
        if (!ok) {
          ++failures;
          break;
        }
      }
      if (table().event_destroy(e) != XAL_SUCCESS ||
          table().stream_destroy(s) != XAL_SUCCESS)
        ++failures;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (uint32_t i = 0; i < 2; ++i) {
    uint64_t free = 0, total = 0;
    ASSERT_EQ(table().mem_get_info(inst.device(i), &free, &total), XAL_SUCCESS);
    EXPECT_EQ(free, total);
  }
}

// A ring of streams on two devices, each waiting for its predecessor's
// event before adding to a shared counter: the waits order the work.
TEST(Concurrency, EventChainsAcrossDevicesKeepOrder) {
  Instance inst("2*l4");
  constexpr int kStreams = 6;
  constexpr int kRounds = 40;
  std::vector<xal_bstream_t*> streams;
  std::vector<xal_bevent_t*> events;
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(inst.stream(static_cast<uint32_t>(i % 2)));
    events.push_back(inst.event(static_cast<uint32_t>(i % 2), XAL_EVENT_DISABLE_TIMING));
  }
  struct Step {
    std::vector<int>* log;
    int value;
    static void run(void* p) {
      auto* s = static_cast<Step*>(p);
      s->log->push_back(s->value);  // ordered by the event chain
    }
  };
  std::vector<int> log;
  std::vector<Step> steps;
  steps.reserve(kStreams * kRounds);
  for (int r = 0; r < kRounds; ++r)
    for (int i = 0; i < kStreams; ++i) steps.push_back({&log, r * kStreams + i});
  for (int r = 0; r < kRounds; ++r) {
    for (int i = 0; i < kStreams; ++i) {
      const int prev = (i + kStreams - 1) % kStreams;
      if (r > 0 || i > 0) {
        ASSERT_EQ(table().stream_wait_event(streams[i], events[prev]), XAL_SUCCESS);
      }
      ASSERT_EQ(table().stream_enqueue_host_func(streams[i], Step::run,
                                                 &steps[r * kStreams + i]),
                XAL_SUCCESS);
      ASSERT_EQ(table().event_record(events[i], streams[i]), XAL_SUCCESS);
    }
  }
  for (uint32_t d = 0; d < 2; ++d)
    ASSERT_EQ(table().device_synchronize(inst.device(d)), XAL_SUCCESS);
  ASSERT_EQ(log.size(), static_cast<size_t>(kStreams * kRounds));
  for (size_t i = 0; i < log.size(); ++i) ASSERT_EQ(log[i], static_cast<int>(i));
  for (int i = 0; i < kStreams; ++i) {
    EXPECT_EQ(table().event_destroy(events[i]), XAL_SUCCESS);
    EXPECT_EQ(table().stream_destroy(streams[i]), XAL_SUCCESS);
  }
}

TEST(Concurrency, ResetWhileAnotherDeviceWaitsOnItsEvent) {
  Instance inst(R"([{"profile": "l4", "memory": "1MiB", "count": 2}])");
  xal_bstream_t* s0 = inst.stream(0);
  xal_bstream_t* s1 = inst.stream(1);
  xal_bevent_t* e0 = inst.event(0);
  std::atomic<int> ran{0};
  auto slow = [](void* p) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    static_cast<std::atomic<int>*>(p)->fetch_add(1);
  };
  ASSERT_EQ(table().stream_enqueue_host_func(s0, slow, &ran), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(e0, s0), XAL_SUCCESS);
  ASSERT_EQ(table().stream_wait_event(s1, e0), XAL_SUCCESS);
  ASSERT_EQ(table().stream_enqueue_host_func(s1, slow, &ran), XAL_SUCCESS);
  ASSERT_EQ(table().device_reset(inst.device(0)), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s1), XAL_SUCCESS);  // never hangs
  EXPECT_EQ(ran.load(), 2);
  EXPECT_EQ(table().event_query(e0), XAL_SUCCESS);
  EXPECT_EQ(table().event_destroy(e0), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s0), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s1), XAL_SUCCESS);
}

TEST(Concurrency, StreamsCreatedAndDestroyedWhileDeviceSynchronizes) {
  Instance inst("1*l4");
  std::atomic<bool> stop{false};
  std::thread syncer([&] {
    while (!stop) EXPECT_EQ(table().device_synchronize(inst.device(0)), XAL_SUCCESS);
  });
  for (int i = 0; i < 100; ++i) {
    xal_bstream_t* s = inst.stream(0);
    ASSERT_EQ(table().stream_destroy(s), XAL_SUCCESS);
  }
  stop = true;
  syncer.join();
}

// Another thread's device_synchronize holds the stream too; destroy must
// still wait for the stream's work, so the last copy's data is there when
// it returns.
TEST(Concurrency, DestroyWaitsForWorkWhileDeviceSynchronizes) {
  Instance inst("1*l4");
  constexpr int kRounds = 20;
  constexpr size_t kBytes = 4096;
  struct Round {
    std::vector<unsigned char> src, back;
    std::atomic<bool> started{false};
  };
  std::vector<Round> rounds(kRounds);  // outlive every queued copy
  std::atomic<bool> stop{false};
  std::thread syncer([&] {
    while (!stop) EXPECT_EQ(table().device_synchronize(inst.device(0)), XAL_SUCCESS);
  });
  auto slow = [](void* p) {
    static_cast<std::atomic<bool>*>(p)->store(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // busy work
  };
  const xal_devptr_t p = inst.alloc(0, kBytes);
  int mismatches = 0;
  for (int r = 0; r < kRounds; ++r) {
    Round& round = rounds[r];
    round.src.assign(kBytes, static_cast<unsigned char>(r + 1));
    round.back.assign(kBytes, 0);
    xal_bstream_t* s = inst.stream(0);
    ASSERT_EQ(table().stream_enqueue_host_func(s, slow, &round.started), XAL_SUCCESS);
    ASSERT_EQ(table().memcpy_htod(s, p, round.src.data(), kBytes), XAL_SUCCESS);
    ASSERT_EQ(table().memcpy_dtoh(s, round.back.data(), p, kBytes), XAL_SUCCESS);
    while (!round.started) std::this_thread::yield();  // the syncer sees s busy
    ASSERT_EQ(table().stream_destroy(s), XAL_SUCCESS);
    if (round.back != round.src) ++mismatches;
  }
  stop = true;
  syncer.join();
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(table().mem_free(inst.device(0), p), XAL_SUCCESS);
}

TEST(Concurrency, ShutdownDrainsStreamsLeftOpen) {
  std::atomic<int> ran{0};
  {
    Instance inst("2*l4");
    xal_bstream_t* s0 = inst.stream(0);
    xal_bstream_t* s1 = inst.stream(1);
    xal_bevent_t* e = inst.event(0);
    auto bump = [](void* p) {
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      static_cast<std::atomic<int>*>(p)->fetch_add(1);
    };
    ASSERT_EQ(table().stream_enqueue_host_func(s0, bump, &ran), XAL_SUCCESS);
    ASSERT_EQ(table().event_record(e, s0), XAL_SUCCESS);
    ASSERT_EQ(table().stream_wait_event(s1, e), XAL_SUCCESS);
    ASSERT_EQ(table().stream_enqueue_host_func(s1, bump, &ran), XAL_SUCCESS);
  }  // shutdown with the streams and event still alive
  EXPECT_EQ(ran.load(), 2);
}

}  // namespace
}  // namespace xal::mock
