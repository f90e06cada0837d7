// Copies in every direction, odd sizes and offsets, memset, bad input.
#include <numeric>
#include <vector>

#include "test_util.hpp"

using namespace xal_test;

using Copy = Xal;

TEST_F(Copy, RoundTripsWithOddSizesAndOffsets) {
  for (size_t size : {size_t{1}, size_t{3}, size_t{255}, size_t{4097}, size_t{1} << 20}) {
    xal_devptr_t a, b;
    ASSERT_XAL_OK(xal_mem_alloc(dev0, size + 7, &a));
    ASSERT_XAL_OK(xal_mem_alloc(dev0, size + 7, &b));
    std::vector<uint8_t> in(size), out(size, 0);
    std::iota(in.begin(), in.end(), static_cast<uint8_t>(size));
    ASSERT_XAL_OK(xal_memcpy_htod(stream0, a + 7, in.data(), size));
    ASSERT_XAL_OK(xal_memcpy_dtod(stream0, b + 3, a + 7, size));
    ASSERT_XAL_OK(xal_memcpy_dtoh(stream0, out.data(), b + 3, size));
    ASSERT_XAL_OK(xal_stream_synchronize(stream0));
    EXPECT_EQ(in, out) << size;
    ASSERT_XAL_OK(xal_memset(stream0, b, 0xab, size + 7));
    ASSERT_XAL_OK(xal_memcpy_dtoh(stream0, out.data(), b, size));
    ASSERT_XAL_OK(xal_stream_synchronize(stream0));
    EXPECT_EQ(out, std::vector<uint8_t>(size, 0xab));
    ASSERT_XAL_OK(xal_mem_free(dev0, a));
    ASSERT_XAL_OK(xal_mem_free(dev0, b));
  }
}

TEST_F(Copy, ZeroBytesIsANoOp) {
  EXPECT_EQ(xal_memcpy_htod(stream0, 0, nullptr, 0), XAL_SUCCESS);
  EXPECT_EQ(xal_memcpy_dtoh(stream0, nullptr, 0, 0), XAL_SUCCESS);
  EXPECT_EQ(xal_memcpy_dtod(stream0, 0, 0, 0), XAL_SUCCESS);
  EXPECT_EQ(xal_memset(stream0, 0, 0, 0), XAL_SUCCESS);
  EXPECT_EQ(xal_memcpy_peer(stream0, dev1, 0, dev0, 0, 0), XAL_SUCCESS);
  // Still, the stream must be a stream.
  EXPECT_XAL_ERROR(xal_memcpy_htod(nullptr, 0, nullptr, 0), XAL_ERROR_INVALID_HANDLE);
}

TEST_F(Copy, BadArguments) {
  xal_devptr_t p;
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 64, &p));
  uint8_t b[64];
  EXPECT_XAL_ERROR(xal_memcpy_htod(stream0, p, nullptr, 8), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_memcpy_dtoh(stream0, nullptr, p, 8), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_memcpy_htod(nullptr, p, b, 8), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_memcpy_dtoh(nullptr, b, p, 8), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_memcpy_dtod(nullptr, p, p, 8), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_memset(nullptr, p, 0, 8), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_memcpy_htod(reinterpret_cast<xal_stream_t>(dev0), p, b, 8),
                   XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_memcpy_htod(stream0, p, b, SIZE_MAX), XAL_ERROR_OUT_OF_BOUNDS);
  ASSERT_XAL_OK(xal_mem_free(dev0, p));
}

TEST_F(Copy, DestroyedStreamIsRefused) {
  xal_stream_t s;
  ASSERT_XAL_OK(xal_stream_create(dev0, XAL_STREAM_NON_BLOCKING, &s));
  ASSERT_XAL_OK(xal_stream_query(s));
  ASSERT_XAL_OK(xal_stream_destroy(s));
  uint8_t b[4] = {};
  EXPECT_XAL_ERROR(xal_memcpy_htod(s, 0, b, 4), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_stream_synchronize(s), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_stream_query(s), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_stream_destroy(s), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_stream_create(dev0, 0x80, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_stream_create(dev0, 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_stream_create(nullptr, 0, &s), XAL_ERROR_INVALID_HANDLE);
}

TEST_F(Copy, AsyncStreamsKeepOrder) {
  ASSERT_XAL_OK(xal_shutdown());
  ScopedEnv a("XAL_TESTDEV_ASYNC", "1");
  ASSERT_XAL_OK(init(plugin("testdev")));
  ASSERT_XAL_OK(xal_device_get(0, &dev0));
  ASSERT_XAL_OK(xal_stream_create(dev0, 0, &stream0));
  const size_t n = 1 << 16;
  xal_devptr_t p;
  ASSERT_XAL_OK(xal_mem_alloc(dev0, n, &p));
  std::vector<uint8_t> out(n);
  for (int round = 0; round < 20; ++round) {
    ASSERT_XAL_OK(xal_memset(stream0, p, static_cast<uint8_t>(round), n));
    ASSERT_XAL_OK(xal_memcpy_dtoh(stream0, out.data(), p, n));
    ASSERT_XAL_OK(xal_stream_synchronize(stream0));
    ASSERT_EQ(out[n - 1], round);
  }
  EXPECT_EQ(xal_stream_query(stream0), XAL_SUCCESS);
  ASSERT_XAL_OK(xal_mem_free(dev0, p));
}
