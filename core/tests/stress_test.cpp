// Several threads allocating, copying and freeing on shared devices.
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "test_util.hpp"

using namespace xal_test;

TEST(Stress, ThreadsShareDevices) {
  ScopedEnv a("XAL_TESTDEV_ASYNC", "1");
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  uint32_t ndev = 0;
  ASSERT_XAL_OK(xal_device_count(&ndev));
  ASSERT_EQ(ndev, 4u);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([t, ndev, &failures] {
      std::mt19937 rng(static_cast<uint32_t>(t) * 7919u);
      xal_device_t d, peer;
      xal_device_get(static_cast<uint32_t>(t) % ndev, &d);
      xal_device_get(static_cast<uint32_t>(t + 1) % ndev, &peer);
      xal_stream_t s;
      if (xal_stream_create(d, 0, &s) != XAL_SUCCESS) {
        ++failures;
        return;
      }
      for (int i = 0; i < 60; ++i) {
        const size_t n = 1 + rng() % (64 << 10);
        xal_devptr_t a = 0, b = 0, c = 0;
        std::vector<uint8_t> in(n), out(n);
        for (auto& x : in) x = static_cast<uint8_t>(rng());
        bool ok = xal_mem_alloc(d, n, &a) == XAL_SUCCESS &&
                  xal_mem_alloc(d, n, &b) == XAL_SUCCESS &&
                  xal_mem_alloc(peer, n, &c) == XAL_SUCCESS &&
                  xal_memcpy_htod(s, a, in.data(), n) == XAL_SUCCESS &&
                  xal_memcpy_dtod(s, b, a, n) == XAL_SUCCESS &&
                  xal_memcpy_peer(s, peer, c, d, b, n) == XAL_SUCCESS &&
                  xal_memset(s, a, 0, n) == XAL_SUCCESS &&
                  xal_memcpy_peer(s, d, a, peer, c, n) == XAL_SUCCESS &&
                  xal_memcpy_dtoh(s, out.data(), a, n) == XAL_SUCCESS &&
                  xal_stream_synchronize(s) == XAL_SUCCESS && in == out;
        // Every thread also provokes errors: they must stay per thread.
        ok = ok && xal_memcpy_htod(s, a, in.data(), n + 1) == XAL_ERROR_OUT_OF_BOUNDS;
        xal_error_info_t e{};
        e.struct_size = sizeof e;
        xal_last_error(&e);
        ok = ok && e.status == XAL_ERROR_OUT_OF_BOUNDS;
        if (a) ok = xal_mem_free(d, a) == XAL_SUCCESS && ok;
        if (b) ok = xal_mem_free(d, b) == XAL_SUCCESS && ok;
        if (c) ok = xal_mem_free(peer, c) == XAL_SUCCESS && ok;
        if (!ok) ++failures;
        xal_event_t ev;
        if (xal_event_create(d, 0, &ev) == XAL_SUCCESS) {
          xal_event_record(ev, s);
          xal_event_synchronize(ev);
          xal_event_destroy(ev);
        }
      }
      if (xal_stream_destroy(s) != XAL_SUCCESS) ++failures;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (uint32_t i = 0; i < ndev; ++i) {
    xal_device_t d;
    ASSERT_XAL_OK(xal_device_get(i, &d));
    xal_device_metrics_t m{};
    m.struct_size = sizeof m;
    ASSERT_XAL_OK(xal_device_get_metrics(d, &m));
    EXPECT_EQ(m.xal_alloc_count_current, 0u);
    EXPECT_EQ(m.xal_alloc_bytes_current, 0u);
  }
  ASSERT_XAL_OK(xal_shutdown());
}
