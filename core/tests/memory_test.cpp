// Allocation and the registry: bounds, freed memory, double and foreign
// frees, XAL_VALIDATION=0.
#include <cstring>
#include <vector>

#include "test_util.hpp"

using namespace xal_test;

using Memory = Xal;

TEST_F(Memory, AllocFreeAndAlignment) {
  xal_devptr_t p = 0, q = 0;
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 1000, &p));
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 1, &q));
  EXPECT_NE(p, 0u);
  EXPECT_EQ(p % 256, 0u);
  EXPECT_NE(p, q);
  ASSERT_XAL_OK(xal_mem_free(dev0, p));
  ASSERT_XAL_OK(xal_mem_free(dev0, q));
}

TEST_F(Memory, BadAllocations) {
  xal_devptr_t p;
  EXPECT_XAL_ERROR(xal_mem_alloc(dev0, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_mem_alloc(dev0, 16, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_mem_alloc(nullptr, 16, &p), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_mem_alloc(dev0, SIZE_MAX, &p), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_XAL_ERROR(xal_mem_alloc(dev0, size_t{1} << 40, &p), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_XAL_ERROR(xal_mem_alloc(reinterpret_cast<xal_device_t>(stream0), 16, &p),
                   XAL_ERROR_INVALID_HANDLE);
}

TEST_F(Memory, BadFrees) {
  xal_devptr_t p;
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 4096, &p));
  // Wrong device: the message names the owner.
  EXPECT_XAL_ERROR(xal_mem_free(dev1, p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("device 0"), std::string::npos)
      << last_error().message;
  // Inside, not at the start.
  EXPECT_XAL_ERROR(xal_mem_free(dev0, p + 16), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_XAL_OK(xal_mem_free(dev0, p));
  // Double free.
  EXPECT_XAL_ERROR(xal_mem_free(dev0, p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_mem_free(dev0, 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_mem_free(dev0, 0xdead0000), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_mem_free(nullptr, p), XAL_ERROR_INVALID_HANDLE);
}

TEST_F(Memory, CopiesOutsideAllocationsAreOutOfBounds) {
  xal_devptr_t p;
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 1000, &p));
  std::vector<uint8_t> host(4096, 1);
  ASSERT_XAL_OK(xal_memcpy_htod(stream0, p, host.data(), 1000));
  ASSERT_XAL_OK(xal_memcpy_htod(stream0, p + 999, host.data(), 1));
  // One byte past the end.
  EXPECT_XAL_ERROR(xal_memcpy_htod(stream0, p, host.data(), 1001), XAL_ERROR_OUT_OF_BOUNDS);
  const std::string msg = last_error().message;
  EXPECT_NE(msg.find("past the end"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1000 bytes"), std::string::npos) << msg;
  EXPECT_XAL_ERROR(xal_memcpy_dtoh(stream0, host.data(), p + 500, 501), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_memcpy_dtod(stream0, p, p + 1, 1000), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_memset(stream0, p + 1000, 0, 1), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_memset(stream0, p, 0, SIZE_MAX), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_memset(stream0, p + 10, 0, SIZE_MAX - 5), XAL_ERROR_OUT_OF_BOUNDS);
  // Below every allocation.
  EXPECT_XAL_ERROR(xal_memset(stream0, 8, 0, 1), XAL_ERROR_OUT_OF_BOUNDS);
  // Memory of the other device: the message names its owner.
  xal_devptr_t q;
  ASSERT_XAL_OK(xal_mem_alloc(dev1, 64, &q));
  EXPECT_XAL_ERROR(xal_memcpy_htod(stream0, q, host.data(), 8), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_NE(std::string(last_error().message).find("allocation of device 1"), std::string::npos)
      << last_error().message;
  ASSERT_XAL_OK(xal_mem_free(dev1, q));
  // Freed memory.
  ASSERT_XAL_OK(xal_mem_free(dev0, p));
  EXPECT_XAL_ERROR(xal_memcpy_htod(stream0, p, host.data(), 16), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_memcpy_dtoh(stream0, host.data(), p, 16), XAL_ERROR_OUT_OF_BOUNDS);
}

TEST_F(Memory, PointersOfAnotherDeviceAreOutOfBounds) {
  xal_devptr_t p1;
  ASSERT_XAL_OK(xal_mem_alloc(dev1, 4096, &p1));
  uint8_t b[16] = {};
  // stream0 runs on device 0; p1 belongs to device 1.
  EXPECT_XAL_ERROR(xal_memcpy_htod(stream0, p1, b, 16), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_memset(stream0, p1, 0, 16), XAL_ERROR_OUT_OF_BOUNDS);
  ASSERT_XAL_OK(xal_mem_free(dev1, p1));
}

TEST(MemoryValidationOff, ChecksAreSkipped) {
  for (int via_env = 0; via_env < 2; ++via_env) {
    ScopedEnv v("XAL_VALIDATION", via_env ? "0" : nullptr);
    ASSERT_XAL_OK(init(plugin("testdev"), nullptr, via_env ? -1 : 0));
    xal_device_t d;
    ASSERT_XAL_OK(xal_device_get(0, &d));
    xal_stream_t s;
    ASSERT_XAL_OK(xal_stream_create(d, 0, &s));
    xal_devptr_t p;
    // testdev rounds allocations up to 4 KiB, so this overrun is harmless.
    ASSERT_XAL_OK(xal_mem_alloc(d, 1000, &p));
    std::vector<uint8_t> host(2048, 3);
    EXPECT_EQ(xal_memcpy_htod(s, p, host.data(), 2048), XAL_SUCCESS);
    EXPECT_EQ(xal_memset(s, p + 1000, 0, 100), XAL_SUCCESS);
    ASSERT_XAL_OK(xal_stream_synchronize(s));
    ASSERT_XAL_OK(xal_mem_free(d, p));
    // Handle checks stay on: a NULL handle is still refused.
    EXPECT_XAL_ERROR(xal_memset(nullptr, p, 0, 1), XAL_ERROR_INVALID_HANDLE);
    // A double free reaches the backend, which reports it.
    EXPECT_XAL_ERROR(xal_mem_free(d, p), XAL_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(last_error().backend, "testdev");
    ASSERT_XAL_OK(xal_shutdown());
  }
}
