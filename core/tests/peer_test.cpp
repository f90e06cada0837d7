// xal_memcpy_peer within one backend and across two (staged by the core).
#include <algorithm>
#include <numeric>
#include <string>
#include <optional>
#include <tuple>
#include <vector>

#include "test_util.hpp"

using namespace xal_test;

namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 12));
  return v;
}

// Two backends (testdev: devices 0-1, testdev2: devices 2-3).
class Peer : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  void SetUp() override {
    const auto [async, host_ptr] = GetParam();
    async_.emplace("XAL_TESTDEV_ASYNC", async ? "1" : nullptr);
    host_.emplace("XAL_TESTDEV_NO_HOST_PTR", host_ptr ? nullptr : "1");
    ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
    for (uint32_t i = 0; i < 4; ++i) ASSERT_XAL_OK(xal_device_get(i, &dev[i]));
  }
  void TearDown() override { EXPECT_EQ(xal_shutdown(), XAL_SUCCESS); }

  void copy_and_check(uint32_t from, uint32_t to, bool stream_on_dst, size_t n) {
    xal_stream_t s;
    ASSERT_XAL_OK(xal_stream_create(dev[stream_on_dst ? to : from], 0, &s));
    xal_stream_t sf, st;
    ASSERT_XAL_OK(xal_stream_create(dev[from], 0, &sf));
    ASSERT_XAL_OK(xal_stream_create(dev[to], 0, &st));
    xal_devptr_t a, b;
    ASSERT_XAL_OK(xal_mem_alloc(dev[from], n + 64, &a));
    ASSERT_XAL_OK(xal_mem_alloc(dev[to], n + 64, &b));
    const auto in = pattern(n, static_cast<uint8_t>(n + from));
    ASSERT_XAL_OK(xal_memcpy_htod(sf, a + 5, in.data(), n));
    ASSERT_XAL_OK(xal_stream_synchronize(sf));
    ASSERT_XAL_OK(xal_memcpy_peer(s, dev[to], b + 11, dev[from], a + 5, n));
    ASSERT_XAL_OK(xal_stream_synchronize(s));
    std::vector<uint8_t> out(n);
    ASSERT_XAL_OK(xal_memcpy_dtoh(st, out.data(), b + 11, n));
    ASSERT_XAL_OK(xal_stream_synchronize(st));
    EXPECT_TRUE(in == out) << "copy " << from << "->" << to << " of " << n << " bytes";
    ASSERT_XAL_OK(xal_mem_free(dev[from], a));
    ASSERT_XAL_OK(xal_mem_free(dev[to], b));
    for (xal_stream_t x : {s, sf, st}) ASSERT_XAL_OK(xal_stream_destroy(x));
  }

  xal_device_t dev[4] = {};
  std::optional<ScopedEnv> async_, host_;
};

}  // namespace

TEST_P(Peer, WithinOneBackend) {
  copy_and_check(0, 1, false, 4097);
  copy_and_check(1, 0, true, 1 << 20);
  copy_and_check(3, 2, false, 12345);
}

TEST_P(Peer, AcrossBackendsInPipelinedChunks) {
  // Sizes below, at and above the staging chunk, with a partial last chunk.
  for (size_t n : {size_t{1}, size_t{4096 + 3}, size_t{8} << 20, (size_t{20} << 20) + 123}) {
    copy_and_check(0, 2, false, n);
    copy_and_check(3, 1, true, n);
  }
}

TEST_P(Peer, ManyQueuedCopiesStayOrdered) {
  xal_stream_t s;
  ASSERT_XAL_OK(xal_stream_create(dev[0], 0, &s));
  const size_t n = 1 << 20;
  xal_devptr_t a, b;
  ASSERT_XAL_OK(xal_mem_alloc(dev[0], n, &a));
  ASSERT_XAL_OK(xal_mem_alloc(dev[2], n, &b));
  std::vector<uint8_t> out(n);
  for (int i = 0; i < 8; ++i) {
    ASSERT_XAL_OK(xal_memset(s, a, static_cast<uint8_t>(i + 1), n));
    ASSERT_XAL_OK(xal_memcpy_peer(s, dev[2], b, dev[0], a, n));
  }
  ASSERT_XAL_OK(xal_stream_synchronize(s));
  xal_stream_t s2;
  ASSERT_XAL_OK(xal_stream_create(dev[2], 0, &s2));
  ASSERT_XAL_OK(xal_memcpy_dtoh(s2, out.data(), b, n));
  ASSERT_XAL_OK(xal_stream_synchronize(s2));
  EXPECT_EQ(out, std::vector<uint8_t>(n, 8));
}

TEST_P(Peer, BadArguments) {
  xal_stream_t s0, s1;
  ASSERT_XAL_OK(xal_stream_create(dev[0], 0, &s0));
  ASSERT_XAL_OK(xal_stream_create(dev[1], 0, &s1));
  xal_devptr_t a, b;
  ASSERT_XAL_OK(xal_mem_alloc(dev[0], 256, &a));
  ASSERT_XAL_OK(xal_mem_alloc(dev[2], 256, &b));
  // Stream of a third device.
  EXPECT_XAL_ERROR(xal_memcpy_peer(s1, dev[2], b, dev[0], a, 16), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_memcpy_peer(s0, nullptr, b, dev[0], a, 16), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_memcpy_peer(s0, dev[2], b, nullptr, a, 16), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_memcpy_peer(nullptr, dev[2], b, dev[0], a, 16), XAL_ERROR_INVALID_HANDLE);
  // Ranges: past the end on each side, pointers swapped between devices.
  EXPECT_XAL_ERROR(xal_memcpy_peer(s0, dev[2], b, dev[0], a, 257), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_memcpy_peer(s0, dev[2], b + 200, dev[0], a, 100), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_memcpy_peer(s0, dev[2], a, dev[0], b, 16), XAL_ERROR_OUT_OF_BOUNDS);
  ASSERT_XAL_OK(xal_mem_free(dev[2], b));
  EXPECT_XAL_ERROR(xal_memcpy_peer(s0, dev[2], b, dev[0], a, 16), XAL_ERROR_OUT_OF_BOUNDS);
}

TEST_P(Peer, ShutdownWithCopiesInFlight) {
  xal_stream_t s;
  ASSERT_XAL_OK(xal_stream_create(dev[1], 0, &s));
  xal_event_t gate;
  ASSERT_XAL_OK(xal_event_create(dev[3], 0, &gate));
  const size_t n = 9 << 20;
  xal_devptr_t a, b;
  ASSERT_XAL_OK(xal_mem_alloc(dev[1], n, &a));
  ASSERT_XAL_OK(xal_mem_alloc(dev[3], n, &b));
  for (int i = 0; i < 4; ++i) {
    ASSERT_XAL_OK(xal_memcpy_peer(s, dev[3], b, dev[1], a, n));
    ASSERT_XAL_OK(xal_memcpy_peer(s, dev[1], a, dev[3], b, n));
  }
  // No synchronisation: xal_shutdown (in TearDown) finishes or cancels them.
}

INSTANTIATE_TEST_SUITE_P(Modes, Peer,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "Async" : "Inline") +
                                  (std::get<1>(info.param) ? "HostPtr" : "Staged");
                         });

// A staged copy between backends whose device-to-host copy fails (fault
// injection in testdev2: its 2nd memcpy_dtoh, the second chunk's) fails its
// stream's next synchronize with the backend's status and message, once.
// The chunk already on its way to the destination (each host-to-device
// copy takes 300 ms here) is complete by then: the staging buffers go back
// to the pool only once no copy uses them.
TEST(PeerFailure, AFailedStagedCopyFailsItsStream) {
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
  ScopedEnv staged("XAL_TESTDEV_NO_HOST_PTR", "1");
  ScopedEnv fault("XAL_TESTDEV_FAIL_DTOH", "testdev2:2");
  ScopedEnv slow("XAL_TESTDEV_HTOD_DELAY_MS", "300");
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  xal_device_t dst_dev, src_dev;
  ASSERT_XAL_OK(xal_device_get(0, &dst_dev));
  ASSERT_XAL_OK(xal_device_get(2, &src_dev));
  xal_stream_t s, ss, ds;
  ASSERT_XAL_OK(xal_stream_create(dst_dev, 0, &s));
  ASSERT_XAL_OK(xal_stream_create(src_dev, 0, &ss));
  ASSERT_XAL_OK(xal_stream_create(dst_dev, 0, &ds));
  const size_t chunk = 8u << 20, n = 2 * chunk + 4096;  // three chunks
  xal_devptr_t a, b;
  ASSERT_XAL_OK(xal_mem_alloc(src_dev, n, &a));
  ASSERT_XAL_OK(xal_mem_alloc(dst_dev, n, &b));
  const auto in = pattern(n, 3);
  ASSERT_XAL_OK(xal_memcpy_htod(ss, a, in.data(), n));
  ASSERT_XAL_OK(xal_memset(ds, b, 0, n));
  ASSERT_XAL_OK(xal_stream_synchronize(ss));
  ASSERT_XAL_OK(xal_stream_synchronize(ds));
  ASSERT_XAL_OK(xal_memcpy_peer(s, dst_dev, b, src_dev, a, n));
  EXPECT_XAL_ERROR(xal_stream_synchronize(s), XAL_ERROR_BACKEND);
  EXPECT_NE(std::string(last_error().message).find("injected memcpy_dtoh failure"), std::string::npos)
      << last_error().message;
  ASSERT_XAL_OK(xal_stream_synchronize(s));  // reported once
  std::vector<uint8_t> out(chunk);
  ASSERT_XAL_OK(xal_memcpy_dtoh(ds, out.data(), b, chunk));
  ASSERT_XAL_OK(xal_stream_synchronize(ds));
  EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin())) << "the first chunk was still on its way";
  // The pool's buffers serve the next copy.
  ASSERT_XAL_OK(xal_memcpy_peer(s, dst_dev, b, src_dev, a, n));
  ASSERT_XAL_OK(xal_stream_synchronize(s));
  std::vector<uint8_t> all(n);
  ASSERT_XAL_OK(xal_memcpy_dtoh(ds, all.data(), b, n));
  ASSERT_XAL_OK(xal_stream_synchronize(ds));
  EXPECT_TRUE(all == in);
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}
