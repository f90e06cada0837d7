// XAL_TRACE over several chunks of its event store: a trace of thousands of
// events, the cap falling inside a chunk, written in time order, session
// after session in one process.
#include <string>

#include "trace_test_util.hpp"

using namespace xal_test;
using namespace xal_trace_test;

TEST_F(Trace, CapInsideALongTraceKeepsTheFirstEventsSessionAfterSession) {
  ScopedEnv trace("XAL_TRACE", path.c_str());
  ScopedEnv cap("XAL_TRACE_MAX_EVENTS", "2000");
  constexpr int kSyncs = 2500;
  for (int session = 0; session < 3; ++session) {
    SCOPED_TRACE("session " + std::to_string(session));
    ASSERT_EQ(init(plugin("testdev")), XAL_SUCCESS);
    xal_device_t d = nullptr;
    xal_stream_t st = nullptr;
    ASSERT_EQ(xal_device_get(0, &d), XAL_SUCCESS);
    ASSERT_EQ(xal_stream_create(d, 0, &st), XAL_SUCCESS);
    for (int i = 0; i < kSyncs; ++i) ASSERT_EQ(xal_stream_synchronize(st), XAL_SUCCESS);
    ASSERT_EQ(xal_stream_destroy(st), XAL_SUCCESS);
    ::testing::internal::CaptureStderr();
    ASSERT_EQ(xal_shutdown(), XAL_SUCCESS);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("dropped " + std::to_string(kSyncs + 5 - 2000)), std::string::npos)
        << err;
    const json t = load(path);
    // init, device_get, stream_create, kSyncs synchronize, stream_destroy,
    // shutdown: the first 2000 kept, in time order, each call once.
    size_t kept = 0, syncs = 0;
    double last_ts = -1;
    uint64_t last_call = 0;
    for (const json& e : t["traceEvents"]) {
      if (e["ph"] == "M") continue;
      ++kept;
      EXPECT_EQ(e["pid"], pid());
      EXPECT_GE(e["ts"].get<double>(), last_ts);
      last_ts = e["ts"].get<double>();
      const uint64_t call = e["args"]["call"];
      EXPECT_GT(call, last_call);
      last_call = call;
      if (e["name"] == "xal_stream_synchronize") ++syncs;
      EXPECT_NE(e["name"], "xal_shutdown");
    }
    EXPECT_EQ(kept, 2000u);
    EXPECT_EQ(syncs, 1997u);
    EXPECT_EQ(t["otherData"]["dropped_events"], kSyncs + 5 - 2000);
    EXPECT_EQ(t["otherData"]["max_events"], 2000);
    const auto api = api_events(t);
    ASSERT_EQ(api.size(), 2000u);
    EXPECT_EQ(api[0]["name"], "xal_init");
    EXPECT_EQ(api[1]["name"], "xal_device_get");
    EXPECT_EQ(api[2]["name"], "xal_stream_create");
  }
}
