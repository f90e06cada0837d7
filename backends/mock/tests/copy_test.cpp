// Copies in every direction with odd sizes and offsets, memset, peer copies
// and the bandwidth throttle.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <latch>
#include <numeric>
#include <vector>

#include "copy_engine.h"
#include "mock_harness.h"

namespace xal::mock {
namespace {

using test::Instance;
using test::table;

constexpr size_t MiB = 1u << 20;

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  return v;
}

TEST(CopyEngine, ParallelAndSerialAgree) {
  const size_t threshold = 2 * kChunk;
  for (size_t limit : {threshold, kNeverParallel}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{4097}, threshold - 3,
                     threshold + 12345, 5 * kChunk + 1}) {
      auto src = pattern(n, 3);
      std::vector<unsigned char> dst(n, 0);
      copy_bytes(dst.data(), src.data(), n, limit);
      EXPECT_EQ(dst, src) << n;
      fill_bytes(dst.data(), 0x5a, n, limit);
      EXPECT_EQ(std::count(dst.begin(), dst.end(), 0x5a), static_cast<long>(n)) << n;
    }
  }
  std::vector<unsigned char> overlap = pattern(1000, 1);
  auto expected = overlap;
  std::memmove(expected.data() + 10, expected.data(), 900);
  move_bytes(overlap.data() + 10, overlap.data(), 900);
  EXPECT_EQ(overlap, expected);
}

TEST(Copy, RoundTripOddSizesAndOffsets) {
  Instance inst(R"([{"profile": "a100-40g", "memory": "64MiB"}])");
  xal_bstream_t* s = inst.stream(0);
  const xal_devptr_t buf = inst.alloc(0, 16 * MiB);
  for (size_t n : {size_t{1}, size_t{3}, size_t{255}, size_t{257}, size_t{65537},
                   size_t{5 * MiB + 7}}) {
    for (size_t off : {size_t{0}, size_t{1}, size_t{13}, size_t{4095}}) {
      auto src = pattern(n, static_cast<unsigned>(n + off));
      std::vector<unsigned char> back(n + 2, 0xee);
      ASSERT_EQ(table().memcpy_htod(s, buf + off, src.data(), n), XAL_SUCCESS);
      ASSERT_EQ(table().memcpy_dtoh(s, back.data() + 1, buf + off, n), XAL_SUCCESS);
      ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
      ASSERT_EQ(std::memcmp(back.data() + 1, src.data(), n), 0) << n << "+" << off;
      EXPECT_EQ(back[0], 0xee);
      EXPECT_EQ(back[n + 1], 0xee);
    }
  }
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

TEST(Copy, DeviceToDeviceAndMemset) {
  Instance inst(R"([{"profile": "mi250x", "memory": "32MiB"}])");
  xal_bstream_t* s = inst.stream(0);
  const size_t n = 6 * MiB + 3;
  const xal_devptr_t a = inst.alloc(0, n + 100);
  const xal_devptr_t b = inst.alloc(0, n + 100);
  auto src = pattern(n, 9);
  ASSERT_EQ(table().memcpy_htod(s, a + 5, src.data(), n), XAL_SUCCESS);
  ASSERT_EQ(table().memset(s, b, 0x11, n + 100), XAL_SUCCESS);
  ASSERT_EQ(table().memcpy_dtod(s, b + 7, a + 5, n), XAL_SUCCESS);
  std::vector<unsigned char> back(n + 100);
  ASSERT_EQ(table().memcpy_dtoh(s, back.data(), b, n + 100), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  for (size_t i = 0; i < 7; ++i) ASSERT_EQ(back[i], 0x11) << i;
  ASSERT_EQ(std::memcmp(back.data() + 7, src.data(), n), 0);
  for (size_t i = n + 7; i < n + 100; ++i) ASSERT_EQ(back[i], 0x11) << i;
  // Overlapping dtod within one allocation behaves like memmove.
  ASSERT_EQ(table().memcpy_dtod(s, a + 6, a + 5, 1000), XAL_SUCCESS);
  std::vector<unsigned char> moved(1000);
  ASSERT_EQ(table().memcpy_dtoh(s, moved.data(), a + 6, 1000), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(std::memcmp(moved.data(), src.data(), 1000), 0);
  // Zero-byte copies are no-ops, even with NULL host pointers.
  EXPECT_EQ(table().memcpy_htod(s, a, nullptr, 0), XAL_SUCCESS);
  EXPECT_EQ(table().memset(s, a, 0, 0), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

TEST(Copy, ParallelCopySetting) {
  test::set_config("XAL_MOCK_PARALLEL_COPY", "1.5MiB");
  {
    Instance inst(R"([{"profile": "l4", "memory": "16MiB"}])");
    xal_bstream_t* s = inst.stream(0);
    const size_t n = 3 * MiB + 5;
    const xal_devptr_t a = inst.alloc(0, n);
    auto src = pattern(n, 5);
    std::vector<unsigned char> back(n);
    ASSERT_EQ(table().memcpy_htod(s, a, src.data(), n), XAL_SUCCESS);
    ASSERT_EQ(table().memcpy_dtoh(s, back.data(), a, n), XAL_SUCCESS);
    ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
    EXPECT_EQ(back, src);
    EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
  }
  test::set_config("XAL_MOCK_PARALLEL_COPY", "off");
  EXPECT_NO_THROW(Instance("1*l4"));
  test::set_config("XAL_MOCK_PARALLEL_COPY", "fast");
  test::set_mock_devices("1*l4");
  xal_backend_init_args_t args{sizeof(args), test::services(), nullptr};
  xal_backend_t* b = nullptr;
  EXPECT_EQ(table().init(&args, &b), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("XAL_MOCK_PARALLEL_COPY"), std::string::npos);
  test::set_config("XAL_MOCK_PARALLEL_COPY", "", /*unset=*/true);
}

// A gate a host function blocks on until the test opens it.
struct Gate {
  std::latch open{1};
  static void wait(void* self) { static_cast<Gate*>(self)->open.wait(); }
};

TEST(Copy, IdleStreamRunsSmallCopiesInlineBusyStreamQueuesThem) {
  Instance inst(R"([{"profile": "l4", "memory": "4MiB"}])");
  xal_bdevice_t* d = inst.device(0);
  xal_bstream_t* s = inst.stream(0);
  const xal_devptr_t a = inst.alloc(0, 4096);
  auto* view = static_cast<unsigned char*>(test::host(d, a, 4096));
  std::vector<unsigned char> src(4096, 0x21);
  // Idle: done by the time the call returns.
  ASSERT_EQ(table().memcpy_htod(s, a, src.data(), src.size()), XAL_SUCCESS);
  EXPECT_EQ(view[0], 0x21);
  EXPECT_EQ(view[4095], 0x21);
  EXPECT_EQ(table().stream_query(s), XAL_SUCCESS);
  // Busy: queued behind the host function, in order.
  Gate gate;
  ASSERT_EQ(table().stream_enqueue_host_func(s, Gate::wait, &gate), XAL_SUCCESS);
  ASSERT_EQ(table().memset(s, a, 0x33, 4096), XAL_SUCCESS);
  std::vector<unsigned char> back(4096, 0);
  ASSERT_EQ(table().memcpy_dtoh(s, back.data(), a, 4096), XAL_SUCCESS);
  EXPECT_EQ(view[0], 0x21);
  EXPECT_EQ(back[0], 0);
  EXPECT_EQ(table().stream_query(s), XAL_NOT_READY);
  gate.open.count_down();
  ASSERT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(back, std::vector<unsigned char>(4096, 0x33));
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);

  test::set_config("XAL_MOCK_INLINE_COPY", "off");
  EXPECT_NO_THROW(Instance("1*l4"));
  test::set_config("XAL_MOCK_INLINE_COPY", "12 apples");
  test::set_mock_devices("1*l4");
  xal_backend_init_args_t args{sizeof(args), test::services(), nullptr};
  xal_backend_t* b = nullptr;
  EXPECT_EQ(table().init(&args, &b), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("XAL_MOCK_INLINE_COPY"), std::string::npos);
  test::set_config("XAL_MOCK_INLINE_COPY", "", /*unset=*/true);
}

TEST(Copy, BadInput) {
  Instance inst(R"([{"profile": "l4", "memory": "1MiB"}])");
  xal_bstream_t* s = inst.stream(0);
  const xal_devptr_t a = inst.alloc(0, 1024);
  char buf[16] = {};
  EXPECT_EQ(table().memcpy_htod(s, a, nullptr, 4), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().memcpy_dtoh(s, nullptr, a, 4), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().memcpy_htod(s, 0x1000, buf, 4), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_NE(test::last_error().message.find("not inside the memory"), std::string::npos);
  EXPECT_EQ(table().memcpy_dtoh(s, buf, a + MiB - 8, 16), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_EQ(table().memcpy_dtod(s, a, a + 2 * MiB, 16), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_EQ(table().memset(s, a, 1, SIZE_MAX), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_EQ(table().memcpy_htod(nullptr, a, buf, 4), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(table().stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

TEST(Copy, PeerBetweenMockDevices) {
  Instance inst(R"([{"profile": "h100-sxm-80g", "memory": "32MiB"},
                    {"profile": "mi300x", "memory": "32MiB"}])");
  xal_bdevice_t* d0 = inst.device(0);
  xal_bdevice_t* d1 = inst.device(1);
  xal_bstream_t* s0 = inst.stream(0);
  xal_bstream_t* s1 = inst.stream(1);
  const size_t n = 5 * MiB + 11;
  const xal_devptr_t a = inst.alloc(0, n + 64);
  const xal_devptr_t b = inst.alloc(1, n + 64);
  auto src = pattern(n, 77);
  ASSERT_EQ(table().memcpy_htod(s0, a + 3, src.data(), n), XAL_SUCCESS);
  ASSERT_EQ(table().memcpy_peer(s0, d1, b + 1, d0, a + 3, n), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s0), XAL_SUCCESS);
  std::vector<unsigned char> back(n);
  ASSERT_EQ(table().memcpy_dtoh(s1, back.data(), b + 1, n), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s1), XAL_SUCCESS);
  EXPECT_EQ(back, src);
  // On the destination's stream, and back the other way.
  ASSERT_EQ(table().memset(s0, a, 0, n + 64), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s0), XAL_SUCCESS);
  ASSERT_EQ(table().memcpy_peer(s1, d0, a, d1, b + 1, n), XAL_SUCCESS);
  ASSERT_EQ(table().stream_synchronize(s1), XAL_SUCCESS);
  EXPECT_EQ(std::memcmp(test::host(d0, a, n), src.data(), n), 0);
  // Wrong ranges and foreign devices.
  EXPECT_EQ(table().memcpy_peer(s0, d1, a, d0, a, 16), XAL_ERROR_OUT_OF_BOUNDS);
  Instance other("1*l4");
  EXPECT_EQ(table().memcpy_peer(s0, other.device(0), b, d0, a, 16),
            XAL_ERROR_INVALID_HANDLE);
  Instance three(R"([{"profile": "l4", "memory": "1MiB", "count": 3}])");
  xal_bstream_t* s2 = three.stream(2);
  EXPECT_EQ(table().memcpy_peer(s2, three.device(0), 0, three.device(1), 0, 16),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().stream_destroy(s2), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s0), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s1), XAL_SUCCESS);
}

TEST(Copy, ThrottleMakesCopiesTakeBytesOverBandwidth) {
  // 1 GB/s: 8 MiB takes at least ~8.4 ms.
  Instance inst(R"([{"profile": "l4", "memory": "32MiB", "bandwidth_gbps": 1}])");
  xal_bstream_t* s = inst.stream(0);
  xal_bevent_t* start = inst.event(0);
  xal_bevent_t* end = inst.event(0);
  const size_t n = 8 * MiB;
  const xal_devptr_t a = inst.alloc(0, n);
  std::vector<unsigned char> src(n, 3);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(table().event_record(start, s), XAL_SUCCESS);
  ASSERT_EQ(table().memcpy_htod(s, a, src.data(), n), XAL_SUCCESS);
  ASSERT_EQ(table().event_record(end, s), XAL_SUCCESS);
  ASSERT_EQ(table().event_synchronize(end), XAL_SUCCESS);
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  float ms = 0;
  ASSERT_EQ(table().event_elapsed_ms(start, end, &ms), XAL_SUCCESS);
  const double expected_ms = n / 1e9 * 1e3;
  EXPECT_GE(ms, expected_ms * 0.95);
  EXPECT_GE(wall_ms, expected_ms * 0.95);
  EXPECT_EQ(table().event_destroy(start), XAL_SUCCESS);
  EXPECT_EQ(table().event_destroy(end), XAL_SUCCESS);
  EXPECT_EQ(table().stream_destroy(s), XAL_SUCCESS);
}

}  // namespace
}  // namespace xal::mock
