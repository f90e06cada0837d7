// Metrics: backend sensors merged with the core's counters.
#include <cstddef>
#include <string>
#include <vector>

#include "test_util.hpp"

using namespace xal_test;

using Metrics = Xal;

TEST_F(Metrics, CountersAndSensors) {
  xal_devptr_t a, b;
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 1000, &a));
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 3000, &b));
  std::vector<uint8_t> host(1000);
  ASSERT_XAL_OK(xal_memcpy_htod(stream0, a, host.data(), 1000));
  ASSERT_XAL_OK(xal_memcpy_dtoh(stream0, host.data(), a, 500));
  ASSERT_XAL_OK(xal_memcpy_dtod(stream0, b, a, 250));
  ASSERT_XAL_OK(xal_stream_synchronize(stream0));
  ASSERT_XAL_OK(xal_mem_free(dev0, b));
  EXPECT_EQ(xal_mem_free(dev0, b), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(xal_memset(stream0, b, 0, 1), XAL_ERROR_OUT_OF_BOUNDS);
  ASSERT_XAL_OK(xal_device_set_memory_limit(dev0, 1 << 20));

  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_XAL_OK(xal_device_get_metrics(dev0, &m));
  EXPECT_TRUE(m.valid & XAL_METRIC_XAL_COUNTERS);
  EXPECT_TRUE(m.valid & XAL_METRIC_MEMORY_LIMIT);
  EXPECT_TRUE(m.valid & XAL_METRIC_MEMORY_TOTAL);
  EXPECT_TRUE(m.valid & XAL_METRIC_MEMORY_USED);
  EXPECT_TRUE(m.valid & XAL_METRIC_HEALTH);
  EXPECT_TRUE(m.valid & XAL_METRIC_TEMPERATURE);
  EXPECT_TRUE(m.valid & XAL_METRIC_SIMULATED);
  EXPECT_EQ(m.temperature_c, 42.0);
  EXPECT_EQ(m.xal_bytes_htod, 1000u);
  EXPECT_EQ(m.xal_bytes_dtoh, 500u);
  EXPECT_EQ(m.xal_bytes_dtod, 250u);
  EXPECT_EQ(m.xal_alloc_bytes_current, 1000u);
  EXPECT_EQ(m.xal_alloc_bytes_peak, 4000u);
  EXPECT_EQ(m.xal_alloc_count_current, 1u);
  EXPECT_EQ(m.memory_limit_bytes, 1u << 20);
  EXPECT_EQ(m.memory_total_bytes, 1ull << 30);
  EXPECT_EQ(m.memory_used_bytes, 4096u);  // testdev rounds to 4 KiB
  EXPECT_EQ(m.health, static_cast<uint32_t>(XAL_HEALTH_OK));
  EXPECT_EQ(m.xal_errors[-XAL_ERROR_INVALID_ARGUMENT], 1u);
  EXPECT_EQ(m.xal_errors[-XAL_ERROR_OUT_OF_BOUNDS], 1u);
  // Device 1 saw none of it.
  ASSERT_XAL_OK(xal_device_get_metrics(dev1, &m));
  EXPECT_EQ(m.xal_bytes_htod, 0u);
  EXPECT_EQ(m.xal_errors[-XAL_ERROR_OUT_OF_BOUNDS], 0u);
  EXPECT_XAL_ERROR(xal_device_get_metrics(dev0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_get_metrics(nullptr, &m), XAL_ERROR_INVALID_HANDLE);
  ASSERT_XAL_OK(xal_mem_free(dev0, a));
}

// A caller built with the 1.0 struct (no job fields) is served, and nothing
// past its struct_size is written.
TEST_F(Metrics, ACallerWithThe10StructIsServed) {
  constexpr size_t first = offsetof(xal_device_metrics_t, job_memory_used_bytes);
  std::vector<unsigned char> buf(sizeof(xal_device_metrics_t), 0xAB);
  auto* m = reinterpret_cast<xal_device_metrics_t*>(buf.data());
  m->struct_size = first;
  ASSERT_XAL_OK(xal_device_get_metrics(dev0, m));
  EXPECT_EQ(m->struct_size, first);
  EXPECT_TRUE(m->valid & XAL_METRIC_XAL_COUNTERS);
  EXPECT_FALSE(m->valid & XAL_METRIC_JOB_MEMORY);  // no ledger in this test
  for (size_t i = first; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xAB) << "byte " << i;
  m->struct_size = first - 1;
  EXPECT_XAL_ERROR(xal_device_get_metrics(dev0, m), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("smaller than the"), std::string::npos);
}


TEST_F(Metrics, JobProcessesNeedTheLedgerAndCheckTheirArguments) {
  uint32_t count = 7;
  EXPECT_XAL_ERROR(xal_device_get_job_processes(dev0, 0, nullptr, &count),
                   XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(last_error().message).find("XAL_QUOTA_LEDGER"), std::string::npos);
  EXPECT_XAL_ERROR(xal_device_get_job_processes(dev0, 0, nullptr, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_get_job_processes(dev0, 1, nullptr, &count),
                   XAL_ERROR_INVALID_ARGUMENT);
  xal_job_process_t p{};
  p.struct_size = XAL_JOB_PROCESS_SIZE_MEMORY - 1;
  EXPECT_XAL_ERROR(xal_device_get_job_processes(dev0, 1, &p, &count),
                   XAL_ERROR_INVALID_ARGUMENT);
  // The size before the usage fields is accepted (then: no ledger).
  p.struct_size = XAL_JOB_PROCESS_SIZE_MEMORY;
  EXPECT_XAL_ERROR(xal_device_get_job_processes(dev0, 1, &p, &count),
                   XAL_ERROR_NOT_SUPPORTED);
  EXPECT_XAL_ERROR(xal_device_get_job_processes(nullptr, 0, nullptr, &count),
                   XAL_ERROR_INVALID_HANDLE);
}

// A copy the backend refuses moved no byte: the copy counters count only
// copies that were queued ("bytes copied through xal"); the failures count
// as errors.
TEST(MetricsOfFailedCopies, AreNotCountedAsBytes) {
  ScopedEnv fail("XAL_TESTDEV_FAIL_COPIES", "testdev");
  ASSERT_XAL_OK(init(plugin("testdev")));
  xal_device_t d0, d1;
  ASSERT_XAL_OK(xal_device_get(0, &d0));
  ASSERT_XAL_OK(xal_device_get(1, &d1));
  xal_stream_t s;
  ASSERT_XAL_OK(xal_stream_create(d0, 0, &s));
  constexpr size_t kBytes = 1 << 20;
  xal_devptr_t a, b, c;
  ASSERT_XAL_OK(xal_mem_alloc(d0, kBytes, &a));
  ASSERT_XAL_OK(xal_mem_alloc(d0, kBytes, &b));
  ASSERT_XAL_OK(xal_mem_alloc(d1, kBytes, &c));
  std::vector<uint8_t> host(kBytes);
  EXPECT_XAL_ERROR(xal_memcpy_htod(s, a, host.data(), kBytes), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_XAL_ERROR(xal_memcpy_dtoh(s, host.data(), a, kBytes), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_XAL_ERROR(xal_memcpy_dtod(s, b, a, kBytes), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_XAL_ERROR(xal_memcpy_peer(s, d1, c, d0, a, kBytes), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_XAL_ERROR(xal_memcpy_peer(s, d0, b, d0, a, kBytes), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_XAL_ERROR(xal_memset(s, a, 0, kBytes), XAL_ERROR_OUT_OF_MEMORY);
  for (xal_device_t d : {d0, d1}) {
    xal_device_metrics_t m{};
    m.struct_size = sizeof m;
    ASSERT_XAL_OK(xal_device_get_metrics(d, &m));
    EXPECT_EQ(m.xal_bytes_htod, 0u);
    EXPECT_EQ(m.xal_bytes_dtoh, 0u);
    EXPECT_EQ(m.xal_bytes_dtod, 0u);
    EXPECT_EQ(m.xal_bytes_peer, 0u);
    EXPECT_EQ(m.xal_errors[-XAL_ERROR_OUT_OF_MEMORY], d == d0 ? 6u : 0u);
  }
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}

// The layout of xal_device_metrics_t is part of the ABI (docs/ABI.md, rule
// 5): the error array has a fixed capacity, so a new status code does not
// move the fields after it. Pinned for LP64 (size_t of 8 bytes).
static_assert(XAL_METRICS_ERROR_SLOTS == 17, "xal_errors keeps its 1.0 capacity");
static_assert(sizeof(xal_device_metrics_t::xal_errors) == 17 * sizeof(uint64_t));
static_assert(sizeof(size_t) != 8 || offsetof(xal_device_metrics_t, xal_errors) == 192);
static_assert(sizeof(size_t) != 8 ||
              offsetof(xal_device_metrics_t, job_memory_used_bytes) == 328);
static_assert(sizeof(size_t) != 8 || offsetof(xal_device_metrics_t, job_processes) == 336);
static_assert(sizeof(size_t) != 8 || offsetof(xal_device_metrics_t, reserved0) == 340);
static_assert(sizeof(size_t) != 8 || sizeof(xal_device_metrics_t) == 344);

// Every status of the array is counted; the array ends where the job fields
// begin.
TEST_F(Metrics, ErrorArrayHasItsFixedSlots) {
  EXPECT_EQ(offsetof(xal_device_metrics_t, xal_errors) +
                XAL_METRICS_ERROR_SLOTS * sizeof(uint64_t),
            offsetof(xal_device_metrics_t, job_memory_used_bytes));
  EXPECT_GE(XAL_STATUS_COUNT, XAL_METRICS_ERROR_SLOTS);
  xal_devptr_t p;
  ASSERT_XAL_OK(xal_mem_alloc(dev0, 1000, &p));
  ASSERT_XAL_OK(xal_mem_free(dev0, p));
  EXPECT_XAL_ERROR(xal_mem_free(dev0, p), XAL_ERROR_INVALID_ARGUMENT);
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_XAL_OK(xal_device_get_metrics(dev0, &m));
  EXPECT_EQ(m.xal_errors[XAL_METRICS_ERROR_SLOTS - 1], 0u);  // XAL_ERROR_INTERNAL
  EXPECT_EQ(m.xal_errors[-XAL_ERROR_INVALID_ARGUMENT], 1u);
}
