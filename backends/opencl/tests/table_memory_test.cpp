// The backend through its table: init, devices, memory, copies, errors.
#include "table_harness.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace xal::opencl::testing {
namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  return v;
}

using OpenclDevice = OpenclTable;

TEST_F(OpenclDevice, DescribeAndProperties) {
  xal_backend_describe_t d{};
  d.struct_size = sizeof(d);
  ASSERT_EQ(t->describe(instance.get(), &d), XAL_SUCCESS);
  EXPECT_STREQ(d.name, "opencl");
  EXPECT_NE(std::string(d.driver_version), "");
  EXPECT_NE(std::string(d.note).find("libOpenCL"), std::string::npos) << d.note;
  EXPECT_EQ(std::string(d.note).rfind("verified on PoCL (CPU) only, not yet on a GPU driver", 0),
            0u)
      << d.note;
  // The same words in the table, for xal-info when init fails.
  EXPECT_STREQ(t->support_note,
               "verified on PoCL (CPU) only, not yet on a GPU driver");
  EXPECT_EQ(d.flags & XAL_BACKEND_FLAG_SIMULATED, 0u);

  uint32_t count = 0;
  ASSERT_EQ(t->device_count(instance.get(), &count), XAL_SUCCESS);
  ASSERT_GE(count, 1u);
  xal_bdevice_t* none = nullptr;
  EXPECT_EQ(t->device_get(instance.get(), count, &none), XAL_ERROR_INVALID_ARGUMENT);

  xal_device_properties_t p{};
  p.struct_size = sizeof(p);
  ASSERT_EQ(t->device_get_properties(dev, &p), XAL_SUCCESS);
  EXPECT_GT(std::strlen(p.name), 0u);
  EXPECT_GT(std::strlen(p.vendor), 0u);
  EXPECT_LE(p.kind, static_cast<uint32_t>(XAL_DEVICE_KIND_OTHER));
  EXPECT_GT(p.memory_bytes, 0u);
  EXPECT_GT(p.compute_units, 0u);
  EXPECT_GT(p.max_allocation_bytes, 0u);
  EXPECT_LE(p.max_allocation_bytes, p.memory_bytes);
  EXPECT_NE(p.capabilities & XAL_DEVICE_CAP_KERNELS, 0u);
  EXPECT_NE(p.capabilities & XAL_DEVICE_CAP_EVENT_TIMING, 0u);
  EXPECT_EQ(p.capabilities & XAL_DEVICE_CAP_SIMULATED, 0u);
  const uint8_t zero[16] = {};
  EXPECT_NE(std::memcmp(p.uuid, zero, 16), 0);

  // The uuid is stable: a second instance reports the same one.
  Instance other;
  ASSERT_EQ(other.start(), XAL_SUCCESS);
  xal_bdevice_t* dev2 = nullptr;
  ASSERT_EQ(t->device_get(other.get(), 0, &dev2), XAL_SUCCESS);
  xal_device_properties_t p2{};
  p2.struct_size = sizeof(p2);
  ASSERT_EQ(t->device_get_properties(dev2, &p2), XAL_SUCCESS);
  EXPECT_EQ(std::memcmp(p.uuid, p2.uuid, 16), 0);
  EXPECT_STREQ(p.name, p2.name);
}

TEST_F(OpenclDevice, DeclaredPeakBandwidth) {
  xal_device_properties_t p{};
  p.struct_size = sizeof(p);
  ASSERT_EQ(t->device_get_properties(dev, &p), XAL_SUCCESS);
  EXPECT_EQ(p.peak_memory_bandwidth_gbps, 0.0);  // OpenCL does not report it
  for (const char* text : {"123.5", "0=123.5", "7=1,0=123.5"}) {
    ScopedEnv env("XAL_OPENCL_PEAK_BANDWIDTH_GBPS", text);
    Instance other;
    ASSERT_EQ(other.start(), XAL_SUCCESS) << text << ": " << last_error().message;
    xal_bdevice_t* d = nullptr;
    ASSERT_EQ(t->device_get(other.get(), 0, &d), XAL_SUCCESS);
    ASSERT_EQ(t->device_get_properties(d, &p), XAL_SUCCESS);
    EXPECT_DOUBLE_EQ(p.peak_memory_bandwidth_gbps, 123.5) << text;
  }
  for (const char* text : {"fast", "-3", "0:12", "x=5"}) {
    ScopedEnv env("XAL_OPENCL_PEAK_BANDWIDTH_GBPS", text);
    Instance other;
    EXPECT_EQ(other.start(), XAL_ERROR_BACKEND_UNAVAILABLE) << text;
    EXPECT_NE(last_error().message.find("XAL_OPENCL_PEAK_BANDWIDTH_GBPS"), std::string::npos)
        << last_error().message;
  }
}

TEST_F(OpenclDevice, DeviceTypeFilter) {
  uint32_t count = 0;
  ASSERT_EQ(t->device_count(instance.get(), &count), XAL_SUCCESS);
  uint32_t by_kind[4] = {};
  for (uint32_t i = 0; i < count; ++i) {
    xal_bdevice_t* d = nullptr;
    xal_device_properties_t p{};
    p.struct_size = sizeof(p);
    ASSERT_EQ(t->device_get(instance.get(), i, &d), XAL_SUCCESS);
    ASSERT_EQ(t->device_get_properties(d, &p), XAL_SUCCESS);
    ++by_kind[p.kind];
  }
  const char* names[3] = {"gpu", "cpu", "accelerator"};
  for (uint32_t kind = 0; kind < 3; ++kind) {
    ScopedEnv env("XAL_OPENCL_DEVICE_TYPE", names[kind]);
    Instance other;
    const xal_status_t st = other.start();
    if (by_kind[kind] == 0) {
      EXPECT_EQ(st, XAL_ERROR_BACKEND_UNAVAILABLE) << names[kind];
      EXPECT_NE(last_error().message.find("no OpenCL device matches"), std::string::npos)
          << last_error().message;
    } else {
      ASSERT_EQ(st, XAL_SUCCESS) << names[kind] << ": " << last_error().message;
      uint32_t n = 0;
      ASSERT_EQ(t->device_count(other.get(), &n), XAL_SUCCESS);
      EXPECT_EQ(n, by_kind[kind]) << names[kind];
    }
  }
}

TEST_F(OpenclDevice, AllocFreeAndInfo) {
  uint64_t free0 = 0, total = 0;
  ASSERT_EQ(t->mem_get_info(dev, &free0, &total), XAL_SUCCESS);
  EXPECT_GT(total, 0u);
  EXPECT_LE(free0, total);
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(t->mem_alloc(dev, 1000, &a), XAL_SUCCESS);
  ASSERT_EQ(t->mem_alloc(dev, 3, &b), XAL_SUCCESS);
  EXPECT_NE(a, 0u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a % 256, 0u);
  EXPECT_EQ(b % 256, 0u);
  uint64_t free1 = 0;
  ASSERT_EQ(t->mem_get_info(dev, &free1, &total), XAL_SUCCESS);
  EXPECT_EQ(free0 - free1, 1003u);
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev, a), XAL_ERROR_INVALID_ARGUMENT);  // double free
  EXPECT_NE(last_error().message.find("not a live allocation"), std::string::npos);
  EXPECT_EQ(t->mem_free(dev, b + 1), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(t->mem_free(dev, b), XAL_SUCCESS);
  EXPECT_EQ(t->mem_alloc(dev, 0, &a), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_F(OpenclDevice, HugeAllocationIsOutOfMemoryWithClCode) {
  xal_devptr_t p = 0;
  EXPECT_EQ(t->mem_alloc(dev, size_t{1} << 50, &p), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(last_error().vendor_code, CL_INVALID_BUFFER_SIZE);
  EXPECT_EQ(last_error().vendor_name, "CL_INVALID_BUFFER_SIZE");
  EXPECT_NE(last_error().message.find("clCreateBuffer"), std::string::npos);
}

TEST_F(OpenclDevice, CopiesAllDirectionsAtOddSizesAndOffsets) {
  constexpr size_t kSize = 5003;
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(t->mem_alloc(dev, kSize, &a), XAL_SUCCESS);
  ASSERT_EQ(t->mem_alloc(dev, kSize, &b), XAL_SUCCESS);
  const std::vector<uint8_t> src = pattern(kSize, 3);
  for (size_t size : {size_t{1}, size_t{3}, size_t{255}, size_t{4097}}) {
    for (size_t off : {size_t{0}, size_t{1}, size_t{7}, size_t{513}}) {
      if (off + size > kSize) continue;
      std::vector<uint8_t> back(size, 0), back2(size, 0);
      ASSERT_EQ(t->memset(stream, a, 0, kSize), XAL_SUCCESS);
      ASSERT_EQ(t->memcpy_htod(stream, a + off, src.data(), size), XAL_SUCCESS);
      ASSERT_EQ(t->memcpy_dtod(stream, b + (kSize - size - off), a + off, size), XAL_SUCCESS);
      ASSERT_EQ(t->memcpy_dtoh(stream, back.data(), a + off, size), XAL_SUCCESS);
      ASSERT_EQ(t->memcpy_peer(stream, dev, a, dev, b + (kSize - size - off), size),
                XAL_SUCCESS);
      ASSERT_EQ(t->memcpy_dtoh(stream, back2.data(), a, size), XAL_SUCCESS);
      ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
      EXPECT_EQ(std::memcmp(back.data(), src.data(), size), 0) << size << "@" << off;
      EXPECT_EQ(std::memcmp(back2.data(), src.data(), size), 0) << size << "@" << off;
    }
  }
  // memset of a middle range leaves its neighbours alone.
  std::vector<uint8_t> all(kSize);
  ASSERT_EQ(t->memcpy_htod(stream, a, src.data(), kSize), XAL_SUCCESS);
  ASSERT_EQ(t->memset(stream, a + 11, 0xAB, 1001), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_dtoh(stream, all.data(), a, kSize), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  for (size_t i = 0; i < kSize; ++i) {
    const uint8_t want = (i >= 11 && i < 1012) ? 0xAB : src[i];
    ASSERT_EQ(all[i], want) << i;
  }
  EXPECT_EQ(t->memcpy_htod(stream, a, src.data(), 0), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev, b), XAL_SUCCESS);
}

// memcpy_dtod onto itself and across overlapping ranges, both directions,
// split into pieces (distance 700, 1000) and staged (distance 1, 3), as memmove.
TEST_F(OpenclDevice, OverlappingDeviceCopiesActAsMemmove) {
  constexpr size_t kSize = 4096;
  xal_devptr_t a = 0;
  ASSERT_EQ(t->mem_alloc(dev, kSize, &a), XAL_SUCCESS);
  const std::vector<uint8_t> src = pattern(kSize, 5);
  struct Case {
    size_t from, to, bytes;
  };
  for (const Case c : {Case{100, 100, 2000}, Case{0, 1000, 3000}, Case{1000, 0, 3000},
                       Case{0, 700, 3000}, Case{700, 0, 3000}, Case{10, 13, 4000},
                       Case{13, 10, 4000}, Case{1, 0, 4095}}) {
    ASSERT_EQ(t->memcpy_htod(stream, a, src.data(), kSize), XAL_SUCCESS);
    ASSERT_EQ(t->memcpy_dtod(stream, a + c.to, a + c.from, c.bytes), XAL_SUCCESS)
        << c.from << " -> " << c.to << ": " << last_error().message;
    std::vector<uint8_t> want = src, got(kSize);
    std::memmove(want.data() + c.to, want.data() + c.from, c.bytes);
    ASSERT_EQ(t->memcpy_dtoh(stream, got.data(), a, kSize), XAL_SUCCESS);
    ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
    EXPECT_EQ(got, want) << c.bytes << " bytes " << c.from << " -> " << c.to;
  }
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS);
}

TEST_F(OpenclDevice, OutOfBoundsAndUnknownAddresses) {
  xal_devptr_t a = 0;
  ASSERT_EQ(t->mem_alloc(dev, 100, &a), XAL_SUCCESS);
  std::vector<uint8_t> buf(200);
  EXPECT_EQ(t->memcpy_htod(stream, a + 50, buf.data(), 51), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_NE(last_error().message.find("not inside a live OpenCL allocation"), std::string::npos);
  EXPECT_EQ(t->memcpy_dtoh(stream, buf.data(), a, 101), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_EQ(t->memset(stream, 0x1234, 0, 1), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_EQ(t->memcpy_dtod(stream, a, a + 64, 64), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS);
  EXPECT_EQ(t->memcpy_htod(stream, a, buf.data(), 1), XAL_ERROR_OUT_OF_BOUNDS);  // freed
}

TEST_F(OpenclDevice, HostAllocIsUsableForCopies) {
  void* h = nullptr;
  ASSERT_EQ(t->host_alloc(instance.get(), 1 << 20, 0, &h), XAL_SUCCESS);
  ASSERT_NE(h, nullptr);
  auto* bytes = static_cast<uint8_t*>(h);
  for (size_t i = 0; i < (1 << 20); ++i) bytes[i] = static_cast<uint8_t>(i * 13);
  xal_devptr_t d = 0;
  ASSERT_EQ(t->mem_alloc(dev, 1 << 20, &d), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_htod(stream, d, h, 1 << 20), XAL_SUCCESS);
  std::vector<uint8_t> back(1 << 20);
  ASSERT_EQ(t->memcpy_dtoh(stream, back.data(), d, 1 << 20), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(std::memcmp(back.data(), h, 1 << 20), 0);
  EXPECT_EQ(t->host_free(instance.get(), h), XAL_SUCCESS);
  EXPECT_EQ(t->host_free(instance.get(), h), XAL_ERROR_INVALID_ARGUMENT);
  int local = 0;
  EXPECT_EQ(t->host_free(instance.get(), &local), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(t->host_alloc(instance.get(), 0, 0, &h), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(t->mem_free(dev, d), XAL_SUCCESS);
}

TEST_F(OpenclDevice, ConcurrentThreadsEachWithTheirStream) {
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      xal_bstream_t* s = nullptr;
      if (t->stream_create(dev, 0, &s) != XAL_SUCCESS) return;
      bool good = true;
      for (int round = 0; round < 20 && good; ++round) {
        const size_t n = 1000 + i * 17 + round;
        const std::vector<uint8_t> src = pattern(n, static_cast<uint8_t>(i + round));
        std::vector<uint8_t> back(n);
        xal_devptr_t d = 0;
        good = t->mem_alloc(dev, n, &d) == XAL_SUCCESS &&
               t->memcpy_htod(s, d, src.data(), n) == XAL_SUCCESS &&
               t->memcpy_dtoh(s, back.data(), d, n) == XAL_SUCCESS &&
               t->stream_synchronize(s) == XAL_SUCCESS && back == src &&
               t->mem_free(dev, d) == XAL_SUCCESS;
      }
      ok[i] = good && t->stream_destroy(s) == XAL_SUCCESS;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(std::accumulate(ok.begin(), ok.end(), 0), 4);
}

TEST_F(OpenclDevice, ShutdownFreesWhatIsStillLive) {
  Instance other;
  ASSERT_EQ(other.start(), XAL_SUCCESS);
  xal_bdevice_t* d = nullptr;
  ASSERT_EQ(t->device_get(other.get(), 0, &d), XAL_SUCCESS);
  xal_devptr_t p = 0;
  xal_bstream_t* s = nullptr;
  xal_bevent_t* e = nullptr;
  void* h = nullptr;
  ASSERT_EQ(t->mem_alloc(d, 4096, &p), XAL_SUCCESS);
  ASSERT_EQ(t->stream_create(d, 0, &s), XAL_SUCCESS);
  ASSERT_EQ(t->event_create(d, 0, &e), XAL_SUCCESS);
  ASSERT_EQ(t->event_record(e, s), XAL_SUCCESS);
  ASSERT_EQ(t->host_alloc(other.get(), 4096, 0, &h), XAL_SUCCESS);
  ASSERT_EQ(t->memset(s, p, 1, 4096), XAL_SUCCESS);
  // `other` shuts down here with all of them live; ASan checks for leaks.
}

}  // namespace
}  // namespace xal::opencl::testing
