// The core's fallbacks for optional entries a backend leaves NULL (the
// "minimal" test plugin): staged peer copies without memcpy_peer or host
// funcs, waits without host funcs, host memory without host_register,
// reset, health and metrics.
#include <optional>
#include <vector>

#include "test_util.hpp"

using namespace xal_test;

namespace {

// minimal: devices 0-1; testdev: devices 2-3.
class Fallback : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    async_.emplace("XAL_TESTDEV_ASYNC", GetParam() ? "1" : nullptr);
    ASSERT_XAL_OK(init(plugin("minimal") + "," + plugin("testdev")));
    for (uint32_t i = 0; i < 4; ++i) ASSERT_XAL_OK(xal_device_get(i, &dev[i]));
    for (uint32_t i = 0; i < 4; ++i) ASSERT_XAL_OK(xal_stream_create(dev[i], 0, &s[i]));
  }
  void TearDown() override { EXPECT_EQ(xal_shutdown(), XAL_SUCCESS); }

  void peer(uint32_t from, uint32_t to, uint32_t stream_dev, size_t n) {
    xal_devptr_t a, b;
    ASSERT_XAL_OK(xal_mem_alloc(dev[from], n, &a));
    ASSERT_XAL_OK(xal_mem_alloc(dev[to], n, &b));
    std::vector<uint8_t> in(n), out(n);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint8_t>(i * 13 + from);
    ASSERT_XAL_OK(xal_memcpy_htod(s[from], a, in.data(), n));
    ASSERT_XAL_OK(xal_stream_synchronize(s[from]));
    ASSERT_XAL_OK(xal_memcpy_peer(s[stream_dev], dev[to], b, dev[from], a, n));
    ASSERT_XAL_OK(xal_stream_synchronize(s[stream_dev]));
    ASSERT_XAL_OK(xal_memcpy_dtoh(s[to], out.data(), b, n));
    ASSERT_XAL_OK(xal_stream_synchronize(s[to]));
    EXPECT_TRUE(in == out) << from << "->" << to << " on stream of " << stream_dev;
    ASSERT_XAL_OK(xal_mem_free(dev[from], a));
    ASSERT_XAL_OK(xal_mem_free(dev[to], b));
  }

  xal_device_t dev[4] = {};
  xal_stream_t s[4] = {};
  std::optional<ScopedEnv> async_;
};

}  // namespace

TEST_P(Fallback, PeerCopiesWithoutNativePeerOrHostFuncs) {
  const size_t big = (17u << 20) + 5;
  peer(0, 1, 0, big);   // one backend without memcpy_peer
  peer(1, 0, 0, 4099);
  peer(0, 2, 0, big);   // stream without host funcs: synchronous staging
  peer(2, 1, 2, big);   // stream with host funcs: asynchronous staging
  peer(3, 0, 0, 1);
}

TEST_P(Fallback, CrossBackendWaitWithoutHostFuncs) {
  xal_event_t e;
  ASSERT_XAL_OK(xal_event_create(dev[2], 0, &e));
  xal_devptr_t a;
  ASSERT_XAL_OK(xal_mem_alloc(dev[2], 1 << 20, &a));
  ASSERT_XAL_OK(xal_memset(s[2], a, 1, 1 << 20));
  ASSERT_XAL_OK(xal_event_record(e, s[2]));
  ASSERT_XAL_OK(xal_stream_wait_event(s[0], e));  // s[0] has no host funcs
  EXPECT_EQ(xal_event_query(e), XAL_SUCCESS);
  xal_event_t e0;
  ASSERT_XAL_OK(xal_event_create(dev[0], 0, &e0));
  ASSERT_XAL_OK(xal_event_record(e0, s[0]));
  ASSERT_XAL_OK(xal_stream_wait_event(s[3], e0));  // s[3] has host funcs
  ASSERT_XAL_OK(xal_stream_synchronize(s[3]));
}

TEST_P(Fallback, ResetHealthMetricsKernelsCollectives) {
  EXPECT_XAL_ERROR(xal_device_reset(dev[0]), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(last_error().message).find("reset"), std::string::npos);
  xal_device_health_t h{};
  h.struct_size = sizeof h;
  ASSERT_XAL_OK(xal_device_get_health(dev[0], &h));
  EXPECT_EQ(h.state, XAL_HEALTH_OK);
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_XAL_OK(xal_device_get_metrics(dev[0], &m));
  EXPECT_TRUE(m.valid & XAL_METRIC_XAL_COUNTERS);
  EXPECT_FALSE(m.valid & XAL_METRIC_TEMPERATURE);
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_XAL_OK(xal_device_get_properties(dev[0], &p));
  EXPECT_FALSE(p.capabilities & XAL_DEVICE_CAP_PEER_COPY);
  EXPECT_FALSE(p.capabilities & XAL_DEVICE_CAP_KERNELS);
  EXPECT_FALSE(p.capabilities & XAL_DEVICE_CAP_RESET);
  EXPECT_STREQ(p.backend, "minimal");
  xal_module_t mod;
  EXPECT_XAL_ERROR(xal_module_load(dev[0], XAL_MODULE_FORMAT_NATIVE, "x", 1, &mod),
                   XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(last_error().message).find("backend minimal does not support kernels"),
            std::string::npos);
  // Without native collectives the core's own path serves.
  xal_comm_t c[2];
  ASSERT_XAL_OK(xal_comm_create(dev, 2, nullptr, c));
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_XAL_OK(xal_comm_get_info(c[0], &info));
  EXPECT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_HIERARCHICAL));
  ASSERT_XAL_OK(xal_comm_destroy(c[0]));
  ASSERT_XAL_OK(xal_comm_destroy(c[1]));
  // Group calls skip backends without group entries.
  ASSERT_XAL_OK(xal_group_start());
  ASSERT_XAL_OK(xal_group_end());
}

TEST_P(Fallback, HostMemoryWithoutBackendSupport) {
  void* h = nullptr;
  ASSERT_XAL_OK(xal_host_alloc(3 << 20, 0, &h));
  static_cast<uint8_t*>(h)[(3 << 20) - 1] = 9;
  xal_devptr_t a;
  ASSERT_XAL_OK(xal_mem_alloc(dev[0], 3 << 20, &a));
  ASSERT_XAL_OK(xal_memcpy_htod(s[0], a, h, 3 << 20));
  ASSERT_XAL_OK(xal_stream_synchronize(s[0]));
  ASSERT_XAL_OK(xal_host_free(h));
  EXPECT_XAL_ERROR(xal_host_free(h), XAL_ERROR_INVALID_ARGUMENT);
}

INSTANTIATE_TEST_SUITE_P(Modes, Fallback, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Async" : "Inline"; });
