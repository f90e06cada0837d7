// Two devices of one OpenCL context (PoCL with POCL_DEVICES="pthread
// pthread", as the xal_opencl_two_devices test sets): peer copies and
// cross-device waits. Skips with one device.
#include "table_harness.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace xal::opencl::testing {
namespace {

class OpenclTwoDevices : public OpenclTable {
 protected:
  void SetUp() override {
    OpenclTable::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    uint32_t count = 0;
    ASSERT_EQ(t->device_count(instance.get(), &count), XAL_SUCCESS);
    if (count < 2) {
      GTEST_SKIP() << "one OpenCL device here (PoCL: POCL_DEVICES=\"pthread pthread\")";
      return;
    }
    ASSERT_EQ(t->device_get(instance.get(), 1, &dev1), XAL_SUCCESS);
    ASSERT_EQ(t->stream_create(dev1, 0, &stream1), XAL_SUCCESS);
  }
  void TearDown() override {
    if (stream1 != nullptr) {
      EXPECT_EQ(t->stream_destroy(stream1), XAL_SUCCESS);
    }
    OpenclTable::TearDown();
  }
  xal_bdevice_t* dev1 = nullptr;
  xal_bstream_t* stream1 = nullptr;
};

TEST_F(OpenclTwoDevices, DistinctDevicesSharingAContext) {
  xal_device_properties_t p0{}, p1{};
  p0.struct_size = p1.struct_size = sizeof(p0);
  ASSERT_EQ(t->device_get_properties(dev, &p0), XAL_SUCCESS);
  ASSERT_EQ(t->device_get_properties(dev1, &p1), XAL_SUCCESS);
  EXPECT_NE(std::memcmp(p0.uuid, p1.uuid, 16), 0);
  EXPECT_NE(p0.capabilities & XAL_DEVICE_CAP_PEER_COPY, 0u);
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(t->mem_alloc(dev, 64, &a), XAL_SUCCESS);
  ASSERT_EQ(t->mem_alloc(dev1, 64, &b), XAL_SUCCESS);
  EXPECT_NE(a >> 44, b >> 44);  // separate address ranges
  EXPECT_EQ(t->mem_free(dev1, a), XAL_ERROR_INVALID_ARGUMENT);  // not dev1's
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev1, b), XAL_SUCCESS);
}

TEST_F(OpenclTwoDevices, PeerCopiesBothWaysAtOffsets) {
  constexpr size_t kSize = 70001;
  std::vector<uint8_t> src(kSize), back(kSize);
  for (size_t i = 0; i < kSize; ++i) src[i] = static_cast<uint8_t>(i * 5 + 1);
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(t->mem_alloc(dev, kSize + 16, &a), XAL_SUCCESS);
  ASSERT_EQ(t->mem_alloc(dev1, kSize + 16, &b), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_htod(stream, a + 3, src.data(), kSize), XAL_SUCCESS);
  // On device 0's stream: 0 -> 1.
  ASSERT_EQ(t->memcpy_peer(stream, dev1, b + 9, dev, a + 3, kSize), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_dtoh(stream1, back.data(), b + 9, kSize), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream1), XAL_SUCCESS);
  EXPECT_EQ(back, src);
  // On device 1's stream: 1 -> 0, into a cleared buffer.
  ASSERT_EQ(t->memset(stream, a, 0, kSize + 16), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_peer(stream1, dev, a, dev1, b + 9, kSize), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream1), XAL_SUCCESS);
  std::fill(back.begin(), back.end(), 0);
  ASSERT_EQ(t->memcpy_dtoh(stream, back.data(), a, kSize), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(back, src);
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev1, b), XAL_SUCCESS);
}

TEST_F(OpenclTwoDevices, StreamWaitsForAnEventOfTheOtherDevice) {
  xal_bevent_t* e = nullptr;
  ASSERT_EQ(t->event_create(dev, 0, &e), XAL_SUCCESS);
  std::atomic<bool> open{false};
  std::atomic<int> value{0};
  struct Ctx {
    std::atomic<bool>* open;
    std::atomic<int>* value;
  } ctx{&open, &value};
  ASSERT_EQ(t->stream_enqueue_host_func(
                stream,
                [](void* p) {
                  auto* c = static_cast<Ctx*>(p);
                  while (!c->open->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                  c->value->store(1);
                },
                &ctx),
            XAL_SUCCESS);
  ASSERT_EQ(t->event_record(e, stream), XAL_SUCCESS);
  ASSERT_EQ(t->stream_wait_event(stream1, e), XAL_SUCCESS);
  ASSERT_EQ(t->stream_enqueue_host_func(
                stream1, [](void* p) { static_cast<Ctx*>(p)->value->fetch_add(10); }, &ctx),
            XAL_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(value.load(), 0);  // device 1's stream is held back
  EXPECT_EQ(t->stream_query(stream1), XAL_NOT_READY);
  open = true;
  ASSERT_EQ(t->stream_synchronize(stream1), XAL_SUCCESS);
  EXPECT_EQ(value.load(), 11);
  EXPECT_EQ(t->device_synchronize(dev1), XAL_SUCCESS);
  EXPECT_EQ(t->event_destroy(e), XAL_SUCCESS);
}

}  // namespace
}  // namespace xal::opencl::testing
