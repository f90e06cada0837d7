// Events: record, query, synchronize, elapsed time, waits, bad input.
#include <vector>

#include "test_util.hpp"

using namespace xal_test;

using Event = Xal;

TEST_F(Event, RecordSynchronizeElapsed) {
  xal_event_t a, b;
  ASSERT_XAL_OK(xal_event_create(dev0, 0, &a));
  ASSERT_XAL_OK(xal_event_create(dev0, 0, &b));
  EXPECT_EQ(xal_event_query(a), XAL_SUCCESS);  // never recorded: complete
  ASSERT_XAL_OK(xal_event_record(a, stream0));
  xal_devptr_t p;
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 1 << 20, &p));
  ASSERT_XAL_OK(xal_memset(stream0, p, 1, 1 << 20));
  ASSERT_XAL_OK(xal_event_record(b, stream0));
  ASSERT_XAL_OK(xal_event_synchronize(b));
  EXPECT_EQ(xal_event_query(b), XAL_SUCCESS);
  float ms = -1;
  ASSERT_XAL_OK(xal_event_elapsed_ms(a, b, &ms));
  EXPECT_GE(ms, 0.0f);
  ASSERT_XAL_OK(xal_mem_free(dev0, p));
  ASSERT_XAL_OK(xal_event_destroy(a));
  ASSERT_XAL_OK(xal_event_destroy(b));
}

TEST_F(Event, BadInput) {
  xal_event_t e, other;
  ASSERT_XAL_OK(xal_event_create(dev0, XAL_EVENT_DISABLE_TIMING, &e));
  ASSERT_XAL_OK(xal_event_create(dev1, 0, &other));
  EXPECT_XAL_ERROR(xal_event_create(dev0, 0x40, &e), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_event_create(dev0, 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_event_create(nullptr, 0, &e), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_event_record(nullptr, stream0), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_event_record(e, nullptr), XAL_ERROR_INVALID_HANDLE);
  // Event of device 1 on a stream of device 0.
  EXPECT_XAL_ERROR(xal_event_record(other, stream0), XAL_ERROR_INVALID_ARGUMENT);
  float ms;
  EXPECT_XAL_ERROR(xal_event_elapsed_ms(e, other, &ms), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_event_elapsed_ms(e, e, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_event_elapsed_ms(nullptr, e, &ms), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_event_elapsed_ms(e, nullptr, &ms), XAL_ERROR_INVALID_HANDLE);
  // Never recorded: the backend says so.
  EXPECT_XAL_ERROR(xal_event_elapsed_ms(other, other, &ms), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(last_error().backend, "testdev");
  EXPECT_XAL_ERROR(xal_stream_wait_event(stream0, nullptr), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_stream_wait_event(nullptr, e), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_event_synchronize(nullptr), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_event_query(reinterpret_cast<xal_event_t>(stream0)),
                   XAL_ERROR_INVALID_HANDLE);
  ASSERT_XAL_OK(xal_event_destroy(e));
  EXPECT_XAL_ERROR(xal_event_destroy(e), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_event_query(e), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_event_record(e, stream0), XAL_ERROR_INVALID_HANDLE);
}

TEST_F(Event, WaitAcrossDevicesOfOneBackend) {
  xal_stream_t s1;
  ASSERT_XAL_OK(xal_stream_create(dev1, 0, &s1));
  xal_event_t e;
  ASSERT_XAL_OK(xal_event_create(dev0, 0, &e));
  ASSERT_XAL_OK(xal_event_record(e, stream0));
  ASSERT_XAL_OK(xal_stream_wait_event(s1, e));
  ASSERT_XAL_OK(xal_stream_synchronize(s1));
  ASSERT_XAL_OK(xal_stream_destroy(s1));
}

// Two asynchronous test backends: device 0 is testdev's, device 2
// testdev2's; open(n) gives each a stream and `n` bytes.
class EventCrossBackend : public ::testing::Test {
 protected:
  void open(size_t n) {
    ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
    ASSERT_XAL_OK(xal_device_get(0, &d0));
    ASSERT_XAL_OK(xal_device_get(2, &d2));
    ASSERT_XAL_OK(xal_stream_create(d0, 0, &s0));
    ASSERT_XAL_OK(xal_stream_create(d2, 0, &s2));
    ASSERT_XAL_OK(xal_mem_alloc(d0, n, &a0));
    ASSERT_XAL_OK(xal_mem_alloc(d2, n, &a2));
  }

  ScopedEnv async_{"XAL_TESTDEV_ASYNC", "1"};
  xal_device_t d0 = nullptr, d2 = nullptr;
  xal_stream_t s0 = nullptr, s2 = nullptr;
  xal_devptr_t a0 = 0, a2 = 0;
};

TEST_F(EventCrossBackend, WaitOnAnEventOfAnotherBackend) {
  const size_t n = 4 << 20;
  ASSERT_NO_FATAL_FAILURE(open(n));
  xal_event_t e;
  ASSERT_XAL_OK(xal_event_create(d0, 0, &e));
  // Producer on testdev, consumer on testdev2 waits for it, then copies.
  ASSERT_XAL_OK(xal_memset(s0, a0, 0x5a, n));
  ASSERT_XAL_OK(xal_event_record(e, s0));
  ASSERT_XAL_OK(xal_stream_wait_event(s2, e));
  ASSERT_XAL_OK(xal_memcpy_peer(s2, d2, a2, d0, a0, n));
  std::vector<uint8_t> out(n);
  ASSERT_XAL_OK(xal_memcpy_dtoh(s2, out.data(), a2, n));
  ASSERT_XAL_OK(xal_stream_synchronize(s2));
  EXPECT_EQ(out, std::vector<uint8_t>(n, 0x5a));
  ASSERT_XAL_OK(xal_shutdown());
}

// An event destroyed while another backend's stream still has a wait on it
// queued (the core's host function waits for it): the wait still works and
// nothing uses the destroyed event's memory (checked under ASan).
TEST_F(EventCrossBackend, DestroyedWhileAStreamOfTheOtherWaitsOnIt) {
  const size_t n = 64 << 20;
  ASSERT_NO_FATAL_FAILURE(open(n));
  // s2 is busy when the wait is queued, so the wait runs after the destroy.
  for (int i = 0; i < 4; ++i) ASSERT_XAL_OK(xal_memset(s2, a2, static_cast<uint8_t>(i), n));
  xal_event_t e;
  ASSERT_XAL_OK(xal_event_create(d0, 0, &e));
  ASSERT_XAL_OK(xal_memset(s0, a0, 0x5a, n));
  ASSERT_XAL_OK(xal_event_record(e, s0));
  ASSERT_XAL_OK(xal_stream_wait_event(s2, e));
  ASSERT_XAL_OK(xal_event_destroy(e));
  EXPECT_XAL_ERROR(xal_event_query(e), XAL_ERROR_INVALID_HANDLE);
  ASSERT_XAL_OK(xal_memcpy_peer(s2, d2, a2, d0, a0, n));
  std::vector<uint8_t> out(4096);
  ASSERT_XAL_OK(xal_memcpy_dtoh(s2, out.data(), a2 + n - out.size(), out.size()));
  ASSERT_XAL_OK(xal_stream_synchronize(s2));
  EXPECT_EQ(out, std::vector<uint8_t>(out.size(), 0x5a));
  ASSERT_XAL_OK(xal_shutdown());
}
