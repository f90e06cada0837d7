// Devices: listing, properties, synchronize, reset, health, bad input.
#include <cstring>
#include <string>

#include "test_util.hpp"

using namespace xal_test;

using Device = Xal;

TEST_F(Device, CountAndGet) {
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_device_count(&n));
  EXPECT_EQ(n, 2u);
  EXPECT_NE(dev0, dev1);
  xal_device_t again;
  ASSERT_XAL_OK(xal_device_get(0, &again));
  EXPECT_EQ(again, dev0);
  EXPECT_XAL_ERROR(xal_device_get(2, &again), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_get(0xffffffffu, &again), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_get(0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_count(nullptr), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_F(Device, Properties) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_XAL_OK(xal_device_get_properties(dev1, &p));
  EXPECT_STREQ(p.name, "testdev device 1");
  EXPECT_STREQ(p.backend, "testdev");
  EXPECT_EQ(p.index, 1u);
  EXPECT_EQ(p.backend_index, 1u);
  EXPECT_EQ(p.parent_index, -1);
  EXPECT_EQ(p.memory_bytes, 1ull << 30);
  EXPECT_EQ(p.struct_size, sizeof p);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_PEER_COPY);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_KERNELS);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_COLLECTIVES);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_SIMULATED);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_EVENT_TIMING);
  // A larger struct from a newer caller: the tail is left alone.
  struct Bigger {
    xal_device_properties_t p;
    uint64_t future;
  } big{};
  big.p.struct_size = sizeof big;
  big.future = 0x1234;
  ASSERT_XAL_OK(xal_device_get_properties(dev0, &big.p));
  EXPECT_EQ(big.future, 0x1234u);
  EXPECT_EQ(big.p.struct_size, sizeof big);
  xal_device_properties_t small{};
  small.struct_size = 16;
  EXPECT_XAL_ERROR(xal_device_get_properties(dev0, &small), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_get_properties(dev0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_get_properties(nullptr, &p), XAL_ERROR_INVALID_HANDLE);
}

TEST_F(Device, WrongKindAndGarbageHandles) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  // A stream passed as a device.
  EXPECT_XAL_ERROR(xal_device_get_properties(reinterpret_cast<xal_device_t>(stream0), &p),
                   XAL_ERROR_INVALID_HANDLE);
  // Pointers that are no handle at all: never dereferenced.
  int local = 0;
  EXPECT_XAL_ERROR(xal_device_synchronize(reinterpret_cast<xal_device_t>(&local)),
                   XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_device_synchronize(reinterpret_cast<xal_device_t>(uintptr_t{0x10})),
                   XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_device_synchronize(reinterpret_cast<xal_device_t>(
                       reinterpret_cast<char*>(dev0) + 8)),
                   XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_device_synchronize(nullptr), XAL_ERROR_INVALID_HANDLE);
}

TEST_F(Device, SynchronizeResetHealth) {
  ASSERT_XAL_OK(xal_device_synchronize(dev0));
  xal_devptr_t p;
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 1024, &p));
  ASSERT_XAL_OK(xal_mem_free(dev0, p));
  EXPECT_XAL_ERROR(xal_mem_free(dev0, p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(last_error().message).find("xal_device_reset"), std::string::npos)
      << last_error().message;  // never reset: no reset to name
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 1024, &p));
  xal_event_t e;
  ASSERT_XAL_OK(xal_event_create(dev0, 0, &e));
  ASSERT_XAL_OK(xal_device_reset(dev0));
  // The reset released the device's stream, event and allocation.
  EXPECT_XAL_ERROR(xal_stream_query(stream0), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_event_query(e), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_mem_free(dev0, p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("released by xal_device_reset"),
            std::string::npos)
      << last_error().message;
  // The device itself still works.
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 1024, &p));
  ASSERT_XAL_OK(xal_mem_free(dev0, p));
  xal_device_health_t h{};
  h.struct_size = sizeof h;
  ASSERT_XAL_OK(xal_device_get_health(dev0, &h));
  EXPECT_EQ(h.state, XAL_HEALTH_OK);
  EXPECT_EQ(h.sticky_status, XAL_SUCCESS);
  EXPECT_XAL_ERROR(xal_device_get_health(dev0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_get_health(nullptr, &h), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_device_reset(nullptr), XAL_ERROR_INVALID_HANDLE);
  stream0 = nullptr;
}

TEST(DeviceReset, WorksOnAnOlderPlugin) {
  ASSERT_XAL_OK(init(plugin("oldminor")));
  xal_device_t d;
  ASSERT_XAL_OK(xal_device_get(0, &d));
  ASSERT_XAL_OK(xal_device_reset(d));
  ASSERT_XAL_OK(xal_shutdown());
}
