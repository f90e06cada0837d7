// XAL_TRACE options and bad input: an unwritable file, the event cap, tracing
// off, re-initialisation, the trace written at exit, and launches.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "trace_test_util.hpp"

using namespace xal_test;
using namespace xal_trace_test;

TEST_F(Trace, UnwritableFileIsLoggedAndXalGoesOn) {
  const std::string bad = "/nonexistent-xal-dir/trace.json";
  ScopedEnv trace("XAL_TRACE", bad.c_str());
  ::testing::internal::CaptureStderr();
  const xal_status_t s = init(plugin("testdev"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(s, XAL_SUCCESS) << last_error().message;
  EXPECT_NE(err.find("XAL_TRACE"), std::string::npos) << err;
  EXPECT_NE(err.find(bad), std::string::npos) << err;
  EXPECT_NE(err.find("tracing is off"), std::string::npos) << err;
  xal_device_t d = nullptr;
  xal_stream_t st = nullptr;
  ASSERT_EQ(xal_device_get(0, &d), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_create(d, 0, &st), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_synchronize(st), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(st), XAL_SUCCESS);
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
  EXPECT_FALSE(std::filesystem::exists(bad));
}

TEST_F(Trace, DirectoryAsFileIsLogged) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  ScopedEnv trace("XAL_TRACE", dir.c_str());
  ::testing::internal::CaptureStderr();
  const xal_status_t s = init(plugin("testdev"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(s, XAL_SUCCESS) << last_error().message;
  EXPECT_NE(err.find("cannot write the trace"), std::string::npos) << err;
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}

TEST_F(Trace, CapDropsEventsAndSaysSo) {
  ScopedEnv trace("XAL_TRACE", path.c_str());
  ScopedEnv cap("XAL_TRACE_MAX_EVENTS", "10");
  ASSERT_EQ(init(plugin("testdev")), XAL_SUCCESS);
  xal_device_t d = nullptr;
  xal_stream_t st = nullptr;
  ASSERT_EQ(xal_device_get(0, &d), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_create(d, 0, &st), XAL_SUCCESS);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(xal_stream_synchronize(st), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_destroy(st), XAL_SUCCESS);
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(xal_shutdown(), XAL_SUCCESS);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("dropped"), std::string::npos) << err;
  const json t = load(path);
  size_t kept = 0;
  uint64_t dropped = 0;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] != "M") ++kept;
    if (e["ph"] == "M" && e["name"] == "xal_dropped_events") {
      dropped = e["args"]["dropped"];
      EXPECT_NE(e["args"]["message"].get<std::string>().find("dropped"),
                std::string::npos);
    }
  }
  EXPECT_EQ(kept, 10u);
  // 53 calls after xal_init's start: init, device_get, stream_create,
  // 50 synchronize, stream_destroy, shutdown = 55 events, 10 kept.
  EXPECT_EQ(dropped, 45u);
  EXPECT_EQ(t["otherData"]["dropped_events"], 45);
}

TEST_F(Trace, MalformedCapIsLoggedAndTracingGoesOn) {
  ScopedEnv trace("XAL_TRACE", path.c_str());
  ScopedEnv cap("XAL_TRACE_MAX_EVENTS", "many");
  ::testing::internal::CaptureStderr();
  const xal_status_t s = init(plugin("testdev"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(s, XAL_SUCCESS);
  EXPECT_NE(err.find("XAL_TRACE_MAX_EVENTS"), std::string::npos) << err;
  ASSERT_EQ(xal_shutdown(), XAL_SUCCESS);
  const auto api = api_events(load(path));
  ASSERT_EQ(api.size(), 2u);
  EXPECT_EQ(api[0]["name"], "xal_init");
  EXPECT_EQ(api[1]["name"], "xal_shutdown");
}

TEST_F(Trace, OffWritesNothingAndEachInitStartsAFreshTrace) {
  {
    ScopedEnv trace("XAL_TRACE", path.c_str());
    ASSERT_EQ(init(plugin("testdev")), XAL_SUCCESS);
    xal_device_t d = nullptr;
    ASSERT_EQ(xal_device_get(1, &d), XAL_SUCCESS);
    ASSERT_EQ(xal_shutdown(), XAL_SUCCESS);
  }
  const auto first = std::filesystem::last_write_time(path);
  EXPECT_EQ(api_events(load(path)).size(), 3u);
  // XAL_TRACE unset: the file is left alone.
  ASSERT_EQ(init(plugin("testdev")), XAL_SUCCESS);
  ASSERT_EQ(xal_shutdown(), XAL_SUCCESS);
  EXPECT_EQ(std::filesystem::last_write_time(path), first);
  EXPECT_EQ(api_events(load(path)).size(), 3u);
  // Set again: a new trace replaces the old one.
  ScopedEnv trace("XAL_TRACE", path.c_str());
  ASSERT_EQ(init(plugin("testdev")), XAL_SUCCESS);
  ASSERT_EQ(xal_shutdown(), XAL_SUCCESS);
  EXPECT_EQ(api_events(load(path)).size(), 2u);
}

TEST_F(Trace, WrittenAtExitWithoutShutdown) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The child re-runs this program (another pid: another default path), and
  // main_env clears XAL_TRACE there: it takes the path from this variable.
  const char* inherited = std::getenv("XAL_TRACE_TEST_PATH");
  ScopedEnv trace("XAL_TRACE_TEST_PATH", inherited ? inherited : path.c_str());
  // The child leaves xal initialised on purpose: no leak report there.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string no_leaks = std::string(asan ? asan : "") + ":detect_leaks=0";
  ScopedEnv sanitizer("ASAN_OPTIONS", no_leaks.c_str());
  EXPECT_EXIT(
      {
        setenv("XAL_TRACE", std::getenv("XAL_TRACE_TEST_PATH"), 1);
        if (init(plugin("testdev")) != XAL_SUCCESS) std::_Exit(3);
        xal_device_t d = nullptr;
        xal_stream_t st = nullptr;
        xal_device_get(0, &d);
        xal_stream_create(d, 0, &st);
        xal_memset(st, 0, 0, 0);
        xal_stream_synchronize(st);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  const json t = load(path);
  std::vector<std::string> names;
  for (const json& e : t["traceEvents"])
    if (e["ph"] == "X" && e["pid"].get<uint64_t>() < kDevicePidBase)
      names.push_back(e["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"xal_init", "xal_device_get",
                                             "xal_stream_create", "xal_memset",
                                             "xal_stream_synchronize"}));
}

TEST_F(Trace, LaunchIsNamedAfterItsKernel) {
  ScopedEnv trace("XAL_TRACE", path.c_str());
  ASSERT_EQ(init(plugin("testdev")), XAL_SUCCESS);
  xal_device_t d = nullptr;
  xal_stream_t st = nullptr;
  xal_module_t m = nullptr;
  xal_kernel_t k = nullptr;
  xal_devptr_t p = 0;
  const char image[] = "testdev-kernels";
  ASSERT_EQ(xal_device_get(0, &d), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_create(d, 0, &st), XAL_SUCCESS);
  ASSERT_EQ(xal_module_load(d, XAL_MODULE_FORMAT_NATIVE, image, sizeof image - 1, &m),
            XAL_SUCCESS);
  ASSERT_EQ(xal_kernel_get(m, "fill_u32", &k), XAL_SUCCESS);
  ASSERT_EQ(xal_mem_alloc(d, 64 * 4, &p), XAL_SUCCESS);
  uint32_t value = 7;
  uint64_t count = 64;
  void* args[] = {&p, &value, &count};
  xal_launch_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.grid[0] = cfg.grid[1] = cfg.grid[2] = 1;
  cfg.block[0] = 64;
  cfg.block[1] = cfg.block[2] = 1;
  ASSERT_EQ(xal_kernel_launch(st, k, &cfg, args, 3), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(st), XAL_SUCCESS);
  ASSERT_EQ(xal_shutdown(), XAL_SUCCESS);
  const json t = load(path);
  const auto tracks = stream_tracks(t);
  ASSERT_EQ(tracks.size(), 1u);
  const auto& ops = tracks.begin()->second;
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0]["name"], "launch fill_u32");
  bool found = false;
  for (const json& e : api_events(t))
    if (e["name"] == "xal_kernel_launch") {
      found = true;
      EXPECT_EQ(e["args"]["call"], ops[0]["args"]["call"]);
      EXPECT_EQ(e["args"]["status"], "XAL_SUCCESS");
    }
  EXPECT_TRUE(found);
}
