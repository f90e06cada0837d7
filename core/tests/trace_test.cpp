// XAL_TRACE: a known program is traced as Chrome trace JSON; the file is
// loaded back and checked call by call, and stream by stream.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "trace_test_util.hpp"

using namespace xal_test;
using namespace xal_trace_test;

namespace {

// Every call made, in order, with its status.
struct Recorder {
  std::vector<std::pair<std::string, xal_status_t>> calls;
  xal_status_t operator()(const char* name, xal_status_t status) {
    calls.emplace_back(name, status);
    return status;
  }
};

#define CALL(rec, fn, ...) rec(#fn, fn(__VA_ARGS__))

// The known program: copies, memset, events and a collective on two
// devices, a bad handle, and shutdown.
void run_program(Recorder& rec) {
  xal_device_t dev[2] = {};
  xal_stream_t st[2] = {};
  xal_devptr_t buf[2] = {}, tmp = 0;
  xal_event_t ev = nullptr;
  xal_comm_t comms[2] = {};
  std::vector<float> host(64, 1.0f), back(64);
  const size_t bytes = host.size() * sizeof(float);
  const std::string backends = plugin("testdev");
  xal_init_options_t o{};
  o.struct_size = sizeof o;
  o.backends = backends.c_str();
  o.backend_path = "";
  ASSERT_EQ(CALL(rec, xal_init, &o), XAL_SUCCESS) << last_error().message;
  for (uint32_t i = 0; i < 2; ++i) {
    ASSERT_EQ(CALL(rec, xal_device_get, i, &dev[i]), XAL_SUCCESS);
    ASSERT_EQ(CALL(rec, xal_stream_create, dev[i], 0, &st[i]), XAL_SUCCESS);
    ASSERT_EQ(CALL(rec, xal_mem_alloc, dev[i], bytes, &buf[i]), XAL_SUCCESS);
  }
  ASSERT_EQ(CALL(rec, xal_mem_alloc, dev[0], bytes, &tmp), XAL_SUCCESS);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(CALL(rec, xal_memcpy_htod, st[i], buf[i], host.data(), bytes), XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_memcpy_dtod, st[0], tmp, buf[0], bytes), XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_memset, st[0], tmp, 0, bytes), XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_event_create, dev[0], 0, &ev), XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_event_record, ev, st[0]), XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_stream_wait_event, st[1], ev), XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_event_synchronize, ev), XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_comm_create, dev, 2, nullptr, comms), XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_group_start), XAL_SUCCESS);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(CALL(rec, xal_allreduce, comms[i], buf[i], buf[i], host.size(),
                   XAL_DTYPE_F32, XAL_OP_SUM, st[i]),
              XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_group_end), XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_memcpy_dtoh, st[0], back.data(), buf[0], bytes), XAL_SUCCESS);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(CALL(rec, xal_stream_synchronize, st[i]), XAL_SUCCESS);
  EXPECT_EQ(back, std::vector<float>(64, 2.0f));
  // A device handle where a stream belongs: an error, traced with its status.
  EXPECT_EQ(CALL(rec, xal_memcpy_htod, reinterpret_cast<xal_stream_t>(dev[0]),
                 buf[0], host.data(), bytes),
            XAL_ERROR_INVALID_HANDLE);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(CALL(rec, xal_comm_destroy, comms[i]), XAL_SUCCESS);
    ASSERT_EQ(CALL(rec, xal_mem_free, dev[i], buf[i]), XAL_SUCCESS);
  }
  ASSERT_EQ(CALL(rec, xal_mem_free, dev[0], tmp), XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_event_destroy, ev), XAL_SUCCESS);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(CALL(rec, xal_stream_destroy, st[i]), XAL_SUCCESS);
  ASSERT_EQ(CALL(rec, xal_shutdown), XAL_SUCCESS);
}

// Checks the trace of run_program against the calls made.
void check_program_trace(const json& trace, const Recorder& rec) {
  ASSERT_TRUE(trace.contains("traceEvents"));
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  // Every call, in order, with its status; nothing else on this thread.
  const auto api = api_events(trace);
  ASSERT_EQ(api.size(), rec.calls.size());
  std::map<uint64_t, std::string> call_names;
  for (size_t i = 0; i < api.size(); ++i) {
    SCOPED_TRACE(rec.calls[i].first);
    EXPECT_EQ(api[i]["name"], rec.calls[i].first);
    EXPECT_EQ(api[i]["args"]["status"], xal_status_name(rec.calls[i].second));
    EXPECT_GE(api[i]["dur"].get<double>(), 0.0);
    call_names[api[i]["args"]["call"]] = api[i]["name"];
    if (api[i]["name"] == "xal_mem_alloc") {
      EXPECT_TRUE(api[i]["args"].contains("device"));
      EXPECT_EQ(api[i]["args"]["bytes"], 256);
    }
    if (api[i]["name"] == "xal_memcpy_htod" && rec.calls[i].second == XAL_SUCCESS) {
      EXPECT_TRUE(api[i]["args"].contains("stream"));
      EXPECT_EQ(api[i]["args"]["bytes"], 256);
    }
    if (rec.calls[i].second < 0) {
      EXPECT_NE(api[i]["args"].value("error", ""), "");
    }
  }
  // Two devices, two stream tracks, all named.
  EXPECT_NE(metadata_name(trace, "process_name", pid(), 0), "");
  const auto tracks = stream_tracks(trace);
  ASSERT_EQ(tracks.size(), 2u);
  std::vector<std::vector<std::string>> names;
  for (const auto& [key, ops] : tracks) {
    EXPECT_EQ(metadata_name(trace, "process_name", key.first, 0).rfind(
                  "device " + std::to_string(key.first - kDevicePidBase) + ": ", 0),
              0u);
    EXPECT_EQ(metadata_name(trace, "thread_name", key.first, key.second),
              "stream " + std::to_string(key.second));
    std::vector<std::string> n;
    for (size_t i = 0; i < ops.size(); ++i) {
      const json& op = ops[i];
      EXPECT_GE(op["dur"].get<double>(), 0.0);
      EXPECT_EQ(op["args"]["stream"], key.second);
      if (i > 0) {  // no overlap within a stream (µs rounding aside)
        EXPECT_LE(ops[i - 1]["ts"].get<double>() + ops[i - 1]["dur"].get<double>(),
                  op["ts"].get<double>() + 1e-3);
      }
      // Linked to the call that queued it.
      const std::string caller = call_names[op["args"]["call"]];
      EXPECT_EQ(caller.substr(0, 4), "xal_") << op.dump();
      n.push_back(op["name"]);
    }
    names.push_back(n);
  }
  // Submit order per stream (stream 1 on device 0 first).
  EXPECT_EQ(names[0], (std::vector<std::string>{"memcpy_htod", "memcpy_dtod",
                                                "memset", "event_record",
                                                "allreduce", "memcpy_dtoh"}));
  EXPECT_EQ(names[1], (std::vector<std::string>{"memcpy_htod", "wait_event",
                                                "allreduce"}));
  // Each flow start has its end.
  std::map<uint64_t, int> flows;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "s") ++flows[e["id"]];
    if (e["ph"] == "f") flows[e["id"]] += 2;
  }
  EXPECT_EQ(flows.size(), 9u);
  for (const auto& [id, n] : flows) EXPECT_EQ(n, 3) << "flow " << id;
  // Collective arguments.
  for (const auto& [key, ops] : tracks)
    for (const json& op : ops)
      if (op["name"] == "allreduce") {
        EXPECT_EQ(op["args"]["count"], 64);
        EXPECT_EQ(op["args"]["dtype"], "f32");
        EXPECT_EQ(op["args"]["op"], "sum");
        EXPECT_EQ(op["args"]["bytes"], 256);
      }
}

}  // namespace

TEST_F(Trace, EveryCallAndDeviceOperation) {
  ScopedEnv trace("XAL_TRACE", path.c_str());
  Recorder rec;
  run_program(rec);
  check_program_trace(load(path), rec);
}

TEST_F(Trace, EveryCallWithAsynchronousStreams) {
  ScopedEnv trace("XAL_TRACE", path.c_str());
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
  Recorder rec;
  run_program(rec);
  check_program_trace(load(path), rec);
}
