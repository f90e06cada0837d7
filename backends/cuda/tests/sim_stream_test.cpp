// Streams, events and host functions of the CUDA backend on the simulated
// driver (SIMULATION ONLY).
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "plugin_fixture.h"

namespace xal::cuda::test {
namespace {

struct Gate {
  std::atomic<bool> open{false};
  std::atomic<int> ran{0};
};

void wait_for_gate(void* user) {
  auto* gate = static_cast<Gate*>(user);
  while (!gate->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  gate->ran.fetch_add(1);
}

void count_run(void* user) { static_cast<Gate*>(user)->ran.fetch_add(1); }

TEST_F(CudaSim, StreamRunsInOrderAndQueryTracksIt) {
  Gate gate;
  ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, wait_for_gate, &gate),
            XAL_SUCCESS);
  ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, count_run, &gate),
            XAL_SUCCESS);
  EXPECT_EQ(table_->stream_query(stream0_), XAL_NOT_READY);
  EXPECT_EQ(gate.ran.load(), 0);
  gate.open = true;
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(gate.ran.load(), 2);
  EXPECT_EQ(table_->stream_query(stream0_), XAL_SUCCESS);
}

TEST_F(CudaSim, EventsOrderWorkAcrossDevices) {
  // stream1 waits for an event of stream0 that is held back by a gate.
  Gate gate;
  xal_bevent_t* event = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &event), XAL_SUCCESS);
  const size_t n = 4096;
  const xal_devptr_t a = alloc(dev0_, n);
  const xal_devptr_t b = alloc(dev1_, n);
  ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, wait_for_gate, &gate),
            XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream0_, a, 0x77, n), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(event, stream0_), XAL_SUCCESS);
  EXPECT_EQ(table_->event_query(event), XAL_NOT_READY);
  ASSERT_EQ(table_->stream_wait_event(stream1_, event), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_peer(stream1_, dev1_, b, dev0_, a, n), XAL_SUCCESS);
  std::vector<uint8_t> out(n, 0);
  ASSERT_EQ(table_->memcpy_dtoh(stream1_, out.data(), b, n), XAL_SUCCESS);
  gate.open = true;
  ASSERT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  ASSERT_EQ(table_->event_synchronize(event), XAL_SUCCESS);
  EXPECT_EQ(table_->event_query(event), XAL_SUCCESS);
  for (uint8_t v : out) ASSERT_EQ(v, 0x77);
  EXPECT_EQ(table_->event_destroy(event), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev1_, b), XAL_SUCCESS);
}

TEST_F(CudaSim, ElapsedTimeBetweenEvents) {
  xal_bevent_t* start = nullptr;
  xal_bevent_t* end = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &start), XAL_SUCCESS);
  ASSERT_EQ(table_->event_create(dev0_, 0, &end), XAL_SUCCESS);
  Gate gate;
  gate.open = true;
  ASSERT_EQ(table_->event_record(start, stream0_), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, count_run, &gate),
            XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(end, stream0_), XAL_SUCCESS);
  ASSERT_EQ(table_->event_synchronize(end), XAL_SUCCESS);
  float ms = -1.0f;
  ASSERT_EQ(table_->event_elapsed_ms(start, end, &ms), XAL_SUCCESS);
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(table_->event_destroy(start), XAL_SUCCESS);
  EXPECT_EQ(table_->event_destroy(end), XAL_SUCCESS);
}

TEST_F(CudaSim, ElapsedTimeNeedsTimingAndRecords) {
  xal_bevent_t* timed = nullptr;
  xal_bevent_t* untimed = nullptr;
  xal_bevent_t* never = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &timed), XAL_SUCCESS);
  ASSERT_EQ(table_->event_create(dev0_, XAL_EVENT_DISABLE_TIMING, &untimed),
            XAL_SUCCESS);
  ASSERT_EQ(table_->event_create(dev0_, 0, &never), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(timed, stream0_), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(untimed, stream0_), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  float ms = 0;
  EXPECT_EQ(table_->event_elapsed_ms(timed, untimed, &ms),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("DISABLE_TIMING"), std::string::npos);
  // An event never recorded: the driver says invalid handle.
  EXPECT_EQ(table_->event_elapsed_ms(timed, never, &ms),
            XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(last_error().vendor_code, 400);
  // An event never recorded counts as complete.
  EXPECT_EQ(table_->event_query(never), XAL_SUCCESS);
  for (auto* e : {timed, untimed, never}) {
    EXPECT_EQ(table_->event_destroy(e), XAL_SUCCESS);
  }
}

TEST_F(CudaSim, EventRecordedOnAnotherDevicesStreamIsRefused) {
  xal_bevent_t* event = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &event), XAL_SUCCESS);
  EXPECT_EQ(table_->event_record(event, stream1_), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->event_destroy(event), XAL_SUCCESS);
}

TEST_F(CudaSim, NonBlockingStreamAndDeviceSynchronize) {
  xal_bstream_t* s = nullptr;
  ASSERT_EQ(table_->stream_create(dev1_, XAL_STREAM_NON_BLOCKING, &s),
            XAL_SUCCESS);
  Gate gate;
  gate.open = true;
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(table_->stream_enqueue_host_func(s, count_run, &gate), XAL_SUCCESS);
  }
  ASSERT_EQ(table_->device_synchronize(dev1_), XAL_SUCCESS);
  EXPECT_EQ(gate.ran.load(), 10);
  EXPECT_EQ(table_->stream_destroy(s), XAL_SUCCESS);
}

TEST_F(CudaSim, StreamDestroyWaitsForItsWork) {
  xal_bstream_t* s = nullptr;
  ASSERT_EQ(table_->stream_create(dev0_, 0, &s), XAL_SUCCESS);
  Gate gate;
  gate.open = true;
  ASSERT_EQ(table_->stream_enqueue_host_func(s, count_run, &gate), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(gate.ran.load(), 1);
}

TEST_F(CudaSim, ConcurrentStreamsFromManyThreads) {
  const size_t n = 1 << 14;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      xal_bdevice_t* dev = (t % 2) ? dev1_ : dev0_;
      xal_bstream_t* s = nullptr;
      if (table_->stream_create(dev, 0, &s) != XAL_SUCCESS) { ++failures; return; }
      xal_devptr_t p = 0;
      if (table_->mem_alloc(dev, n, &p) != XAL_SUCCESS) { ++failures; return; }
      std::vector<uint8_t> in(n, static_cast<uint8_t>(t)), out(n, 0xff);
      for (int i = 0; i < 20; ++i) {
        if (table_->memcpy_htod(s, p, in.data(), n) != XAL_SUCCESS ||
            table_->memcpy_dtoh(s, out.data(), p, n) != XAL_SUCCESS ||
            table_->stream_synchronize(s) != XAL_SUCCESS || out != in) {
          ++failures;
        }
      }
      if (table_->mem_free(dev, p) != XAL_SUCCESS) ++failures;
      if (table_->stream_destroy(s) != XAL_SUCCESS) ++failures;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace xal::cuda::test
