// Group "errors": every bad input of the public ABI gets its documented
// status and a message in xal_last_error, and the device works afterwards.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "conform.hpp"
#include "helpers.hpp"

namespace {

using conform::Suite;
constexpr size_t kMiB = 1024 * 1024;

// With XAL_VALIDATION=0 bad inputs are not promised to be caught (README.md:
// null, handle and registry checks are validation), so the group reports
// itself unsupported.
void skip_without_validation() {
  if (!Suite::get().validation()) {
    GTEST_SKIP() << conform::kUnsupported << "XAL_VALIDATION=0: bad inputs are not checked";
  }
}

class Errors : public conform::DeviceTest {
 protected:
  void SetUp() override {
    conform::DeviceTest::SetUp();
    if (!IsSkipped() && !HasFatalFailure()) skip_without_validation();
  }
  void TearDown() override {
    if (!HasFatalFailure() && !IsSkipped() && dev() != nullptr) {
      EXPECT_EQ(conform::round_trip(dev()), "")
          << "the device does not work after the bad calls";
    }
  }
};

TEST_P(Errors, NullOutputs) {
  xal_device_properties_t props{};
  XAL_EXPECT_STATUS(xal_device_get_properties(dev(), nullptr), XAL_ERROR_INVALID_ARGUMENT);
  props.struct_size = 0;
  XAL_EXPECT_STATUS(xal_device_get_properties(dev(), &props), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_device_count(nullptr), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_device_get(index(), nullptr), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_mem_alloc(dev(), 64, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_mem_get_info(dev(), nullptr, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_stream_create(dev(), 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_event_create(dev(), 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_host_alloc(64, 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_device_get_health(dev(), nullptr), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_device_get_metrics(dev(), nullptr), XAL_ERROR_INVALID_ARGUMENT);
  conform::Event a(dev()), b(dev());
  XAL_ASSERT_OK(a.status());
  XAL_ASSERT_OK(b.status());
  XAL_EXPECT_STATUS(xal_event_elapsed_ms(a.get(), b.get(), nullptr), XAL_ERROR_INVALID_ARGUMENT);
  conform::Stream stream(dev());
  XAL_ASSERT_OK(stream.status());
  conform::DeviceBuffer buf(dev(), 4096);
  XAL_ASSERT_OK(buf.status());
  XAL_EXPECT_STATUS(xal_memcpy_htod(stream.get(), buf.ptr(), nullptr, 16), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_memcpy_dtoh(stream.get(), nullptr, buf.ptr(), 16), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_P(Errors, NullHandles) {
  xal_device_properties_t props{};
  props.struct_size = sizeof(props);
  uint8_t host[16] = {};
  xal_stream_t stream = nullptr;
  xal_event_t event = nullptr;
  xal_devptr_t ptr = 0;
  float ms = 0;
  XAL_EXPECT_STATUS(xal_device_get_properties(nullptr, &props), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_device_synchronize(nullptr), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_mem_alloc(nullptr, 64, &ptr), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_stream_create(nullptr, 0, &stream), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_event_create(nullptr, 0, &event), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_stream_synchronize(nullptr), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_stream_query(nullptr), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_stream_destroy(nullptr), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_event_destroy(nullptr), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_event_query(nullptr), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_event_synchronize(nullptr), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_memcpy_htod(nullptr, 0x1000, host, sizeof(host)), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_memset(nullptr, 0x1000, 0, 16), XAL_ERROR_INVALID_HANDLE);
  conform::Stream s(dev());
  conform::Event e(dev());
  XAL_ASSERT_OK(s.status());
  XAL_ASSERT_OK(e.status());
  XAL_EXPECT_STATUS(xal_event_record(nullptr, s.get()), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_event_record(e.get(), nullptr), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_stream_wait_event(s.get(), nullptr), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_event_elapsed_ms(e.get(), nullptr, &ms), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_memcpy_peer(s.get(), nullptr, 0x1000, dev(), 0x1000, 16),
                    XAL_ERROR_INVALID_HANDLE);
}

TEST_P(Errors, DestroyedAndForeignHandles) {
  xal_stream_t stream = nullptr;
  xal_event_t event = nullptr;
  XAL_ASSERT_OK(xal_stream_create(dev(), 0, &stream));
  XAL_ASSERT_OK(xal_event_create(dev(), 0, &event));
  XAL_ASSERT_OK(xal_stream_destroy(stream));
  XAL_ASSERT_OK(xal_event_destroy(event));
  XAL_EXPECT_STATUS(xal_stream_synchronize(stream), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_stream_destroy(stream), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_event_query(event), XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_event_destroy(event), XAL_ERROR_INVALID_HANDLE);
  // Handles of the wrong kind.
  conform::Stream s(dev());
  conform::Event e(dev());
  XAL_ASSERT_OK(s.status());
  XAL_ASSERT_OK(e.status());
  XAL_EXPECT_STATUS(xal_device_synchronize(reinterpret_cast<xal_device_t>(s.get())),
                    XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_stream_synchronize(reinterpret_cast<xal_stream_t>(e.get())),
                    XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_event_query(reinterpret_cast<xal_event_t>(dev())),
                    XAL_ERROR_INVALID_HANDLE);
  // A pointer to memory that is no handle at all.
  alignas(64) uint64_t fake[64] = {};
  XAL_EXPECT_STATUS(xal_stream_query(reinterpret_cast<xal_stream_t>(fake)),
                    XAL_ERROR_INVALID_HANDLE);
  XAL_EXPECT_STATUS(xal_device_synchronize(reinterpret_cast<xal_device_t>(fake)),
                    XAL_ERROR_INVALID_HANDLE);
}

TEST_P(Errors, IndexAndSizes) {
  uint32_t count = 0;
  XAL_ASSERT_OK(xal_device_count(&count));
  xal_device_t d = nullptr;
  XAL_EXPECT_STATUS(xal_device_get(count, &d), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_device_get(UINT32_MAX, &d), XAL_ERROR_INVALID_ARGUMENT);
  xal_devptr_t ptr = 0;
  XAL_EXPECT_STATUS(xal_mem_alloc(dev(), 0, &ptr), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_mem_alloc(dev(), SIZE_MAX, &ptr), XAL_ERROR_OUT_OF_MEMORY);
  XAL_EXPECT_STATUS(xal_mem_alloc(dev(), props().memory_bytes + kMiB, &ptr),
                    XAL_ERROR_OUT_OF_MEMORY);
  void* host = nullptr;
  XAL_EXPECT_STATUS(xal_host_alloc(0, 0, &host), XAL_ERROR_INVALID_ARGUMENT);
  int not_pinned = 0;
  XAL_EXPECT_STATUS(xal_host_free(&not_pinned), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_P(Errors, OutOfBounds) {
  conform::Stream stream(dev());
  XAL_ASSERT_OK(stream.status());
  const size_t bytes = 4096;
  conform::DeviceBuffer buf(dev(), bytes), other(dev(), bytes);
  XAL_ASSERT_OK(buf.status());
  XAL_ASSERT_OK(other.status());
  std::vector<uint8_t> host(2 * bytes);
  const xal_devptr_t p = buf.ptr();
  XAL_EXPECT_STATUS(xal_memcpy_htod(stream.get(), p, host.data(), bytes + 1), XAL_ERROR_OUT_OF_BOUNDS);
  XAL_EXPECT_STATUS(xal_memcpy_htod(stream.get(), p + 1, host.data(), bytes), XAL_ERROR_OUT_OF_BOUNDS);
  XAL_EXPECT_STATUS(xal_memcpy_dtoh(stream.get(), host.data(), p + bytes - 8, 16), XAL_ERROR_OUT_OF_BOUNDS);
  XAL_EXPECT_STATUS(xal_memcpy_dtod(stream.get(), other.ptr(), p, bytes * 2), XAL_ERROR_OUT_OF_BOUNDS);
  XAL_EXPECT_STATUS(xal_memset(stream.get(), p, 0, bytes + 1), XAL_ERROR_OUT_OF_BOUNDS);
  XAL_EXPECT_STATUS(xal_memset(stream.get(), p, 0, SIZE_MAX), XAL_ERROR_OUT_OF_BOUNDS);
  // Below both buffers: a real driver may place `other` right below `buf`.
  const xal_devptr_t below = std::min(p, other.ptr()) - 256;
  XAL_EXPECT_STATUS(xal_memset(stream.get(), below, 0, 16), XAL_ERROR_OUT_OF_BOUNDS);
  XAL_EXPECT_STATUS(xal_memcpy_htod(stream.get(), 8, host.data(), 16), XAL_ERROR_OUT_OF_BOUNDS);
  XAL_ASSERT_OK(xal_stream_synchronize(stream.get()));
}

TEST_P(Errors, FreedMemoryAndDoubleFree) {
  conform::Stream stream(dev());
  XAL_ASSERT_OK(stream.status());
  xal_devptr_t ptr = 0;
  XAL_ASSERT_OK(xal_mem_alloc(dev(), 4096, &ptr));
  XAL_ASSERT_OK(xal_mem_free(dev(), ptr));
  uint8_t host[64] = {};
  XAL_EXPECT_STATUS(xal_memcpy_htod(stream.get(), ptr, host, sizeof(host)), XAL_ERROR_OUT_OF_BOUNDS);
  XAL_EXPECT_STATUS(xal_memcpy_dtoh(stream.get(), host, ptr, sizeof(host)), XAL_ERROR_OUT_OF_BOUNDS);
  XAL_EXPECT_STATUS(xal_mem_free(dev(), ptr), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_mem_free(dev(), 0), XAL_ERROR_INVALID_ARGUMENT);
  conform::DeviceBuffer live(dev(), 4096);
  XAL_ASSERT_OK(live.status());
  XAL_EXPECT_STATUS(xal_mem_free(dev(), live.ptr() + 256), XAL_ERROR_INVALID_ARGUMENT);
  XAL_ASSERT_OK(live.release());
}

XAL_CONFORM_DEVICE_GROUP(errors, Errors);

// Bad inputs that need two devices.
class ErrorsPair : public conform::PairTest {
 protected:
  void SetUp() override {
    conform::PairTest::SetUp();
    if (!IsSkipped() && !HasFatalFailure()) skip_without_validation();
  }
  void TearDown() override {
    if (!HasFatalFailure() && !IsSkipped()) {
      EXPECT_EQ(conform::round_trip(first().handle), "") << "first device";
      EXPECT_EQ(conform::round_trip(second().handle), "") << "second device";
    }
  }
};

TEST_P(ErrorsPair, ForeignPointersAndObjects) {
  conform::DeviceBuffer mine(first().handle, 4096), theirs(second().handle, 4096);
  XAL_ASSERT_OK(mine.status());
  XAL_ASSERT_OK(theirs.status());
  conform::Stream stream(first().handle);
  XAL_ASSERT_OK(stream.status());
  uint8_t host[64] = {};
  XAL_EXPECT_STATUS(xal_memcpy_htod(stream.get(), theirs.ptr(), host, sizeof(host)),
                    XAL_ERROR_OUT_OF_BOUNDS);
  XAL_EXPECT_STATUS(xal_memcpy_dtod(stream.get(), mine.ptr(), theirs.ptr(), 64),
                    XAL_ERROR_OUT_OF_BOUNDS);
  XAL_EXPECT_STATUS(xal_mem_free(first().handle, theirs.ptr()), XAL_ERROR_INVALID_ARGUMENT);
  // Peer copy with the devices swapped: each pointer on the wrong device.
  XAL_EXPECT_STATUS(xal_memcpy_peer(stream.get(), first().handle, theirs.ptr(),
                                    second().handle, mine.ptr(), 64),
                    XAL_ERROR_OUT_OF_BOUNDS);
  // An event of one device recorded on a stream of the other.
  conform::Event event(second().handle);
  XAL_ASSERT_OK(event.status());
  XAL_EXPECT_STATUS(xal_event_record(event.get(), stream.get()), XAL_ERROR_INVALID_ARGUMENT);
  XAL_ASSERT_OK(xal_stream_synchronize(stream.get()));
}

XAL_CONFORM_PAIR_GROUP(errors, ErrorsPair);

}  // namespace
