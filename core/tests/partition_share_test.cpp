// The compute share, measured: two partitions of one mock card at 30% and
// 70%, each saturated by a thread of copies for about 2 s, get about that
// share of the work. The card's copies are throttled to 0.25 GB/s (the mock
// sleeps out the rest of each copy), so that an op's device time does not
// hang on how much CPU a loaded build machine leaves. Also: a grouped
// collective is charged to the share. Label "integration": it measures time.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "test_util.hpp"

using namespace xal_test;

namespace {

constexpr size_t kBytes = 256u << 10;  // per op: about 1 ms at 0.25 GB/s
constexpr auto kRun = std::chrono::seconds(2);

struct Load {
  xal_device_t dev = nullptr;
  uint64_t bytes = 0;   // work done
  double util = 0;      // xal_device_get_metrics utilization at the end
  xal_status_t status = XAL_SUCCESS;
};

void saturate(Load* load, std::atomic<bool>* go) {
  xal_stream_t s = nullptr;
  xal_devptr_t a = 0, b = 0;
  std::vector<uint8_t> host(kBytes, 1);
  if ((load->status = xal_stream_create(load->dev, 0, &s)) ||
      (load->status = xal_mem_alloc(load->dev, kBytes, &a)) ||
      (load->status = xal_mem_alloc(load->dev, kBytes, &b)))
    return;
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  xal_device_get_metrics(load->dev, &m);  // starts the utilization window
  while (!go->load()) std::this_thread::yield();
  const auto end = std::chrono::steady_clock::now() + kRun;
  uint64_t n = 0;
  while (std::chrono::steady_clock::now() < end) {
    if ((load->status = xal_memcpy_htod(s, a, host.data(), kBytes)) ||
        (load->status = xal_memcpy_dtod(s, b, a, kBytes)))
      break;
    load->bytes += 2 * kBytes;
    if (++n % 16 == 0 && (load->status = xal_stream_synchronize(s))) break;
  }
  if (!load->status) load->status = xal_stream_synchronize(s);
  xal_device_get_metrics(load->dev, &m);
  load->util = m.utilization_percent;
  xal_mem_free(load->dev, a);
  xal_mem_free(load->dev, b);
  xal_stream_destroy(s);
}

TEST(PartitionShare, ThirtyAndSeventyPercentOfASaturatedCard) {
  ScopedEnv devices("XAL_MOCK_DEVICES",
                    R"([{"profile":"a100-40g","bandwidth_gbps":0.25}])");
  ScopedEnv parts("XAL_PARTITIONS", "mock:0=1GiB@30%,1GiB@70%");
  ASSERT_EQ(init(XAL_MOCK_PLUGIN), XAL_SUCCESS) << last_error().message;
  Load low, high;
  ASSERT_EQ(xal_device_get(1, &low.dev), XAL_SUCCESS) << last_error().message;
  ASSERT_EQ(xal_device_get(2, &high.dev), XAL_SUCCESS);
  uint32_t pct = 0;
  ASSERT_EQ(xal_device_get_compute_share(low.dev, &pct), XAL_SUCCESS);
  ASSERT_EQ(pct, 30u);
  std::atomic<bool> go{false};
  std::thread t1(saturate, &low, &go), t2(saturate, &high, &go);
  go = true;
  t1.join();
  t2.join();
  ASSERT_EQ(low.status, XAL_SUCCESS) << last_error().message;
  ASSERT_EQ(high.status, XAL_SUCCESS);
  const double fraction =
      static_cast<double>(low.bytes) / static_cast<double>(low.bytes + high.bytes);
  std::printf("partition share: 30%% partition did %.3f of the work "
              "(%llu vs %llu MiB); utilization %.1f%% and %.1f%%\n",
              fraction, static_cast<unsigned long long>(low.bytes >> 20),
              static_cast<unsigned long long>(high.bytes >> 20), low.util,
              high.util);
  RecordProperty("fraction_30", std::to_string(fraction));
  EXPECT_GT(fraction, 0.20);
  EXPECT_LT(fraction, 0.40);
  EXPECT_GT(high.bytes, low.bytes);
  // Its own utilization metric shows the same share.
  EXPECT_GT(low.util, 20.0);
  EXPECT_LT(low.util, 40.0);
  EXPECT_GT(high.util, low.util);
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}

}  // namespace

// A collective inside xal_group_start/end is queued at xal_group_end, and
// charged to the partition's share then: the share's busy time (its
// utilization metric) holds the collective's run, which is most of the
// window (the buffers are large and first touched by the collective);
// uncharged, the share would show about none.
TEST(PartitionShare, GroupedCollectiveIsCharged) {
  constexpr size_t kCount = size_t{16} << 20;  // 64 MiB of f32 per rank
  ScopedEnv devices("XAL_MOCK_DEVICES", R"([{"profile":"a100-40g"}])");
  ScopedEnv parts("XAL_PARTITIONS", "mock:0=1GiB@50%,1GiB@50%");
  ScopedEnv path("XAL_COMM_FORCE_PATH", "hierarchical");
  ASSERT_EQ(init(XAL_MOCK_PLUGIN), XAL_SUCCESS) << last_error().message;
  xal_device_t dev[2] = {};
  xal_stream_t st[2] = {};
  xal_devptr_t buf[2] = {};
  xal_comm_t comms[2] = {};
  for (uint32_t i = 0; i < 2; ++i) {
    ASSERT_EQ(xal_device_get(i + 1, &dev[i]), XAL_SUCCESS) << last_error().message;
    ASSERT_EQ(xal_stream_create(dev[i], 0, &st[i]), XAL_SUCCESS);
    ASSERT_EQ(xal_mem_alloc(dev[i], kCount * sizeof(float), &buf[i]), XAL_SUCCESS);
  }
  ASSERT_EQ(xal_comm_create(dev, 2, nullptr, comms), XAL_SUCCESS) << last_error().message;
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  for (auto* d : dev) ASSERT_EQ(xal_device_get_metrics(d, &m), XAL_SUCCESS);  // window start
  ASSERT_EQ(xal_group_start(), XAL_SUCCESS);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(xal_allreduce(comms[i], buf[i], buf[i], kCount, XAL_DTYPE_F32, XAL_OP_SUM, st[i]),
              XAL_SUCCESS)
        << last_error().message;
  ASSERT_EQ(xal_group_end(), XAL_SUCCESS) << last_error().message;
  for (auto* s : st) ASSERT_EQ(xal_stream_synchronize(s), XAL_SUCCESS);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(xal_device_get_metrics(dev[i], &m), XAL_SUCCESS);
    ASSERT_TRUE(m.valid & XAL_METRIC_UTILIZATION);
    std::printf("grouped allreduce: partition %d busy %.1f%% of the window\n", i,
                m.utilization_percent);
    EXPECT_GT(m.utilization_percent, 25.0);
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(xal_comm_destroy(comms[i]), XAL_SUCCESS);
    EXPECT_EQ(xal_mem_free(dev[i], buf[i]), XAL_SUCCESS);
    EXPECT_EQ(xal_stream_destroy(st[i]), XAL_SUCCESS);
  }
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}
