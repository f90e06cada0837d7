// The backend through its table: streams, events, host functions.
#include "table_harness.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace xal::opencl::testing {
namespace {

using OpenclStream = OpenclTable;

TEST_F(OpenclStream, EventsQueryAndElapsed) {
  xal_bevent_t *a = nullptr, *b = nullptr, *untimed = nullptr;
  ASSERT_EQ(t->event_create(dev, 0, &a), XAL_SUCCESS);
  ASSERT_EQ(t->event_create(dev, 0, &b), XAL_SUCCESS);
  ASSERT_EQ(t->event_create(dev, XAL_EVENT_DISABLE_TIMING, &untimed), XAL_SUCCESS);
  EXPECT_EQ(t->event_query(a), XAL_SUCCESS);  // never recorded
  EXPECT_EQ(t->event_synchronize(a), XAL_SUCCESS);
  float ms = -1;
  EXPECT_EQ(t->event_elapsed_ms(a, b, &ms), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("never recorded"), std::string::npos);

  xal_devptr_t d = 0;
  ASSERT_EQ(t->mem_alloc(dev, 8 << 20, &d), XAL_SUCCESS);
  ASSERT_EQ(t->event_record(a, stream), XAL_SUCCESS);
  ASSERT_EQ(t->memset(stream, d, 7, 8 << 20), XAL_SUCCESS);
  ASSERT_EQ(t->event_record(b, stream), XAL_SUCCESS);
  ASSERT_EQ(t->event_record(untimed, stream), XAL_SUCCESS);
  ASSERT_EQ(t->event_synchronize(b), XAL_SUCCESS);
  EXPECT_EQ(t->event_query(a), XAL_SUCCESS);
  EXPECT_EQ(t->event_query(b), XAL_SUCCESS);
  ASSERT_EQ(t->event_elapsed_ms(a, b, &ms), XAL_SUCCESS) << last_error().message;
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(t->event_elapsed_ms(a, untimed, &ms), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(t->stream_query(stream), XAL_SUCCESS);
  EXPECT_EQ(t->device_synchronize(dev), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev, d), XAL_SUCCESS);
  EXPECT_EQ(t->event_destroy(a), XAL_SUCCESS);
  EXPECT_EQ(t->event_destroy(b), XAL_SUCCESS);
  EXPECT_EQ(t->event_destroy(untimed), XAL_SUCCESS);
}

struct Gate {
  std::atomic<bool> open{false};
  std::atomic<int> value{0};
};

TEST_F(OpenclStream, HostFuncHoldsBackLaterWork) {
  // The function writes the host buffer that the next copy reads: the copy
  // must see the value, so it ran after the function returned.
  struct Ctx {
    int32_t host = 0;
  } ctx;
  xal_devptr_t d = 0;
  ASSERT_EQ(t->mem_alloc(dev, 4, &d), XAL_SUCCESS);
  auto fn = [](void* p) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    static_cast<Ctx*>(p)->host = 42;
  };
  ASSERT_EQ(t->stream_enqueue_host_func(stream, fn, &ctx), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_htod(stream, d, &ctx.host, 4), XAL_SUCCESS);
  int32_t back = 0;
  ASSERT_EQ(t->memcpy_dtoh(stream, &back, d, 4), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(back, 42);
  EXPECT_EQ(t->stream_enqueue_host_func(stream, nullptr, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(t->mem_free(dev, d), XAL_SUCCESS);
}

TEST_F(OpenclStream, HostFuncsRunInOrderAndMayBlock) {
  std::vector<int> order;
  std::mutex m;
  struct Item {
    std::vector<int>* order;
    std::mutex* m;
    int id;
  };
  std::vector<Item> items;
  for (int i = 0; i < 8; ++i) items.push_back({&order, &m, i});
  for (auto& it : items) {
    ASSERT_EQ(t->stream_enqueue_host_func(
                  stream,
                  [](void* p) {
                    auto* item = static_cast<Item*>(p);
                    std::lock_guard lock(*item->m);
                    item->order->push_back(item->id);
                  },
                  &it),
              XAL_SUCCESS);
  }
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST_F(OpenclStream, WaitEventOrdersAcrossStreams) {
  xal_bstream_t* other = nullptr;
  ASSERT_EQ(t->stream_create(dev, 0, &other), XAL_SUCCESS);
  xal_bevent_t* e = nullptr;
  ASSERT_EQ(t->event_create(dev, 0, &e), XAL_SUCCESS);
  Gate gate;
  // Stream 1 is held until the gate opens; stream 2 waits on its event.
  ASSERT_EQ(t->stream_enqueue_host_func(
                stream,
                [](void* p) {
                  auto* g = static_cast<Gate*>(p);
                  while (!g->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                  g->value = 1;
                },
                &gate),
            XAL_SUCCESS);
  ASSERT_EQ(t->event_record(e, stream), XAL_SUCCESS);
  ASSERT_EQ(t->stream_wait_event(other, e), XAL_SUCCESS);
  ASSERT_EQ(t->stream_enqueue_host_func(
                other, [](void* p) { static_cast<Gate*>(p)->value.fetch_add(10); }, &gate),
            XAL_SUCCESS);
  EXPECT_EQ(t->event_query(e), XAL_NOT_READY);
  EXPECT_EQ(t->stream_query(other), XAL_NOT_READY);
  gate.open = true;
  ASSERT_EQ(t->stream_synchronize(other), XAL_SUCCESS);
  EXPECT_EQ(gate.value.load(), 11);  // 1 was set before 10 was added
  EXPECT_EQ(t->event_destroy(e), XAL_SUCCESS);
  EXPECT_EQ(t->stream_destroy(other), XAL_SUCCESS);
}

}  // namespace
}  // namespace xal::opencl::testing
