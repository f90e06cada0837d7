// Page-locked host memory.
#include <cstring>

#include "test_util.hpp"

using namespace xal_test;

using Host = Xal;

TEST_F(Host, AllocUseFree) {
  void* h = nullptr;
  ASSERT_XAL_OK(xal_host_alloc(1 << 20, 0, &h));
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(h) % 4096, 0u);
  std::memset(h, 0x11, 1 << 20);
  xal_devptr_t p;
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 1 << 20, &p));
  ASSERT_XAL_OK(xal_memcpy_htod(stream0, p, h, 1 << 20));
  ASSERT_XAL_OK(xal_memset(stream0, p, 0x22, 16));
  ASSERT_XAL_OK(xal_memcpy_dtoh(stream0, h, p, 1 << 20));
  ASSERT_XAL_OK(xal_stream_synchronize(stream0));
  EXPECT_EQ(static_cast<uint8_t*>(h)[0], 0x22);
  EXPECT_EQ(static_cast<uint8_t*>(h)[16], 0x11);
  void* wc = nullptr;
  ASSERT_XAL_OK(xal_host_alloc(100, XAL_HOST_ALLOC_WRITE_COMBINED, &wc));
  ASSERT_XAL_OK(xal_host_free(wc));
  ASSERT_XAL_OK(xal_host_free(h));
  ASSERT_XAL_OK(xal_mem_free(dev0, p));
}

TEST_F(Host, BadInput) {
  void* h = nullptr;
  EXPECT_XAL_ERROR(xal_host_alloc(0, 0, &h), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_host_alloc(16, 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_host_alloc(16, 0x100, &h), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_host_alloc(SIZE_MAX, 0, &h), XAL_ERROR_OUT_OF_HOST_MEMORY);
  int local;
  EXPECT_XAL_ERROR(xal_host_free(&local), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_host_free(nullptr), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_XAL_OK(xal_host_alloc(64, 0, &h));
  EXPECT_XAL_ERROR(xal_host_free(static_cast<char*>(h) + 1), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_XAL_OK(xal_host_free(h));
  EXPECT_XAL_ERROR(xal_host_free(h), XAL_ERROR_INVALID_ARGUMENT);
}
