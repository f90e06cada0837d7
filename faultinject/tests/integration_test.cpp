// The fault backend through libxal (XAL_BACKENDS=fault:mock): what a
// program sees of each action, xal_fault.h, and the reasons of refusals.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "xal/xal.h"
#include "xal/xal_fault.h"

namespace {

class Integration : public ::testing::Test {
 protected:
  void SetUp() override {
    log_path = ::testing::TempDir() + "/fault_integration_" +
               std::to_string(::getpid()) + ".log";
    std::remove(log_path.c_str());
    for (const char* v : {"XAL_FAULT_PLAN", "XAL_FAULTS", "XAL_FAULT_SEED",
                          "XAL_COMM_TIMEOUT_MS", "XAL_DEVICE_SELECTOR",
                          "XAL_MEMORY_LIMIT", "XAL_BACKEND_PATH",
                          "XAL_COMM_FORCE_PATH"}) {
      ::unsetenv(v);
    }
    ::setenv("XAL_BACKENDS", "fault:mock", 1);
    ::setenv("XAL_FAULT_LOG", log_path.c_str(), 1);
    ::setenv("XAL_MOCK_DEVICES", "2*a100-40g", 1);
  }
  void TearDown() override {
    if (initialized) xal_shutdown();
    std::remove(log_path.c_str());
  }
  void init(const char* faults) {
    if (faults != nullptr) ::setenv("XAL_FAULTS", faults, 1);
    ASSERT_EQ(xal_init(nullptr), XAL_SUCCESS);
    initialized = true;
  }
  xal_device_t dev(uint32_t i) {
    xal_device_t d = nullptr;
    EXPECT_EQ(xal_device_get(i, &d), XAL_SUCCESS);
    return d;
  }
  xal_error_info_t last() {
    xal_error_info_t e{};
    e.struct_size = sizeof e;
    xal_last_error(&e);
    return e;
  }
  xal_device_health_t health(xal_device_t d) {
    xal_device_health_t h{};
    h.struct_size = sizeof h;
    EXPECT_EQ(xal_device_get_health(d, &h), XAL_SUCCESS);
    return h;
  }
  xal_backend_info_t backend(uint32_t i) {
    xal_backend_info_t b{};
    b.struct_size = sizeof b;
    EXPECT_EQ(xal_backend_get_info(i, &b), XAL_SUCCESS);
    return b;
  }
  std::vector<nlohmann::json> log_lines() {
    std::vector<nlohmann::json> out;
    std::ifstream in(log_path);
    std::string line;
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
    return out;
  }

  std::string log_path;
  bool initialized = false;
};

// Sums two ranks' buffers of `n` floats (rank r holds r + 1) through
// `comms`; true when both get 3.
bool allreduce_works(xal_device_t d0, xal_device_t d1, xal_comm_t* comms) {
  const size_t n = 4096;
  xal_device_t devs[2] = {d0, d1};
  xal_devptr_t buf[2] = {};
  xal_stream_t streams[2] = {};
  for (int r = 0; r < 2; ++r) {
    std::vector<float> v(n, static_cast<float>(r + 1));
    if (xal_mem_alloc(devs[r], n * sizeof(float), &buf[r]) != XAL_SUCCESS ||
        xal_stream_create(devs[r], 0, &streams[r]) != XAL_SUCCESS ||
        xal_memcpy_htod(streams[r], buf[r], v.data(), n * sizeof(float)) != XAL_SUCCESS ||
        xal_stream_synchronize(streams[r]) != XAL_SUCCESS)
      return false;
  }
  bool ok = xal_group_start() == XAL_SUCCESS;
  for (int r = 0; r < 2; ++r)
    ok = ok && xal_allreduce(comms[r], buf[r], buf[r], n, XAL_DTYPE_F32, XAL_OP_SUM,
                             streams[r]) == XAL_SUCCESS;
  ok = xal_group_end() == XAL_SUCCESS && ok;
  for (int r = 0; r < 2; ++r) {
    std::vector<float> out(n, 0);
    ok = ok && xal_memcpy_dtoh(streams[r], out.data(), buf[r], n * sizeof(float)) == XAL_SUCCESS &&
         xal_stream_synchronize(streams[r]) == XAL_SUCCESS;
    for (float x : out) ok = ok && x == 3.0f;
    xal_stream_destroy(streams[r]);
    xal_mem_free(devs[r], buf[r]);
  }
  return ok;
}

// A native library that cannot serve the set: the core's path runs the
// devices instead, and says so.
TEST_F(Integration, NativeCommFailureFallsBackToTheCorePath) {
  init("comm_create=BACKEND_UNAVAILABLE");
  xal_device_t devs[2] = {dev(0), dev(1)};
  xal_comm_t comms[2] = {};
  ASSERT_EQ(xal_comm_create(devs, 2, nullptr, comms), XAL_SUCCESS) << last().message;
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_comm_get_info(comms[0], &info), XAL_SUCCESS);
  EXPECT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_HIERARCHICAL));
  EXPECT_NE(std::string(info.description).find("native collectives of fault(mock) failed"),
            std::string::npos)
      << info.description;
  EXPECT_TRUE(allreduce_works(devs[0], devs[1], comms));
  for (xal_comm_t c : comms) EXPECT_EQ(xal_comm_destroy(c), XAL_SUCCESS);
}

// The same for a native group of the core's path (forced here; a mixed set
// plans the same groups): its ranks take part one by one.
TEST_F(Integration, NativeGroupFailureFallsBackToRanksOneByOne) {
  ::setenv("XAL_COMM_FORCE_PATH", "hierarchical", 1);
  init("comm_create=NOT_SUPPORTED");
  xal_device_t devs[2] = {dev(0), dev(1)};
  xal_comm_t comms[2] = {};
  ASSERT_EQ(xal_comm_create(devs, 2, nullptr, comms), XAL_SUCCESS) << last().message;
  ::unsetenv("XAL_COMM_FORCE_PATH");
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_comm_get_info(comms[0], &info), XAL_SUCCESS);
  EXPECT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_HIERARCHICAL));
  EXPECT_NE(std::string(info.description).find("failed"), std::string::npos)
      << info.description;
  EXPECT_TRUE(allreduce_works(devs[0], devs[1], comms));
  for (xal_comm_t c : comms) EXPECT_EQ(xal_comm_destroy(c), XAL_SUCCESS);
}

TEST_F(Integration, NativeCommFailureIsReturnedWhenTheNativePathIsForced) {
  ::setenv("XAL_COMM_FORCE_PATH", "native", 1);
  init("comm_create=BACKEND_UNAVAILABLE");
  xal_device_t devs[2] = {dev(0), dev(1)};
  xal_comm_t comms[2] = {};
  EXPECT_EQ(xal_comm_create(devs, 2, nullptr, comms), XAL_ERROR_BACKEND_UNAVAILABLE);
  ::unsetenv("XAL_COMM_FORCE_PATH");
}

// A library that failed (not one that cannot serve): the program sees the
// injected error, on the native path and for a native group of the core's.
TEST_F(Integration, InjectedCommCreateErrorReachesTheCaller) {
  init("comm_create=nth(1)BACKEND;comm_create=nth(1)INTERNAL");
  xal_device_t devs[2] = {dev(0), dev(1)};
  xal_comm_t comms[2] = {};
  EXPECT_EQ(xal_comm_create(devs, 2, nullptr, comms), XAL_ERROR_BACKEND);
  EXPECT_NE(std::string(last().message).find("injected XAL_ERROR_BACKEND into comm_create"),
            std::string::npos)
      << last().message;
  ::setenv("XAL_COMM_FORCE_PATH", "hierarchical", 1);
  EXPECT_EQ(xal_comm_create(devs, 2, nullptr, comms), XAL_ERROR_INTERNAL);
  ::unsetenv("XAL_COMM_FORCE_PATH");
  ASSERT_EQ(xal_comm_create(devs, 2, nullptr, comms), XAL_SUCCESS) << last().message;
  for (xal_comm_t c : comms) EXPECT_EQ(xal_comm_destroy(c), XAL_SUCCESS);
}

TEST_F(Integration, DeviceErrorOfCommCreateIsReturned) {
  init("comm_create=OUT_OF_MEMORY");
  xal_device_t devs[2] = {dev(0), dev(1)};
  xal_comm_t comms[2] = {};
  EXPECT_EQ(xal_comm_create(devs, 2, nullptr, comms), XAL_ERROR_OUT_OF_MEMORY);
}

TEST_F(Integration, ForcedNativePathWorksAndUnknownPathIsRefused) {
  ::setenv("XAL_COMM_FORCE_PATH", "native", 1);
  init("");
  xal_device_t devs[2] = {dev(0), dev(1)};
  xal_comm_t comms[2] = {};
  ASSERT_EQ(xal_comm_create(devs, 2, nullptr, comms), XAL_SUCCESS) << last().message;
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_comm_get_info(comms[1], &info), XAL_SUCCESS);
  EXPECT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_NATIVE));
  EXPECT_TRUE(allreduce_works(devs[0], devs[1], comms));
  for (xal_comm_t c : comms) EXPECT_EQ(xal_comm_destroy(c), XAL_SUCCESS);
  ::setenv("XAL_COMM_FORCE_PATH", "fastest", 1);
  EXPECT_EQ(xal_comm_create(devs, 2, nullptr, comms), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last().message).find("XAL_COMM_FORCE_PATH 'fastest'"),
            std::string::npos)
      << last().message;
  ::unsetenv("XAL_COMM_FORCE_PATH");
}

TEST_F(Integration, ShowsTheTargetsDevices) {
  init("");
  uint32_t n = 0;
  ASSERT_EQ(xal_backend_count(&n), XAL_SUCCESS);
  ASSERT_EQ(n, 1u);
  const auto b = backend(0);
  EXPECT_STREQ(b.name, "fault(mock)");
  EXPECT_EQ(b.state, static_cast<uint32_t>(XAL_BACKEND_STATE_LOADED));
  EXPECT_TRUE(b.flags & XAL_BACKEND_FLAG_WRAPPER);
  EXPECT_TRUE(b.flags & XAL_BACKEND_FLAG_SIMULATED);
  ASSERT_EQ(xal_device_count(&n), XAL_SUCCESS);
  EXPECT_EQ(n, 2u);
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(xal_device_get_properties(dev(0), &p), XAL_SUCCESS);
  EXPECT_NE(std::string(p.name).find("A100"), std::string::npos) << p.name;
}

TEST_F(Integration, MissingTargetIsReported) {
  ::setenv("XAL_BACKENDS", "fault:nosuchbackend", 1);
  init("");
  const auto b = backend(0);
  EXPECT_NE(b.state, static_cast<uint32_t>(XAL_BACKEND_STATE_LOADED));
  EXPECT_NE(std::string(b.reason).find(
                "fault: target backend 'nosuchbackend' could not be loaded: "),
            std::string::npos)
      << b.reason;
  // With the core's own reason, not just a status name.
  EXPECT_NE(std::string(b.reason).find("libxal_backend_nosuchbackend.so not found"),
            std::string::npos)
      << b.reason;
  uint32_t n = 9;
  ASSERT_EQ(xal_device_count(&n), XAL_SUCCESS);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(xal_fault_clear(), XAL_ERROR_BACKEND_UNAVAILABLE);
}

// A path to the fault plugin is refused as its name is: it cannot wrap itself.
TEST_F(Integration, FaultPluginByPathIsRefusedAsATarget) {
  for (const char* target : {"fault", XAL_FAULT_PLUGIN_PATH}) {
    SCOPED_TRACE(target);
    ::setenv("XAL_BACKENDS", (std::string("fault:") + target).c_str(), 1);
    init("");
    const auto b = backend(0);
    EXPECT_NE(b.state, static_cast<uint32_t>(XAL_BACKEND_STATE_LOADED)) << b.name;
    EXPECT_NE(std::string(b.reason).find("the fault backend cannot wrap itself"),
              std::string::npos)
        << b.reason;
    xal_shutdown();
    initialized = false;
  }
}

// A backend that did not start says why in its log, for xal-fault to report.
TEST_F(Integration, StartFailureIsWrittenToTheLog) {
  ::setenv("XAL_BACKENDS", "fault:nosuchbackend", 1);
  init("");
  std::ifstream in(log_path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line)) << "no log line";
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j.at("event"), "start_failed");
  EXPECT_EQ(j.at("status"), "XAL_ERROR_BACKEND_UNAVAILABLE");
  EXPECT_NE(j.at("reason").get<std::string>().find(
                "target backend 'nosuchbackend' could not be loaded"),
            std::string::npos)
      << line;
}

TEST_F(Integration, MalformedPlanIsRefused) {
  const std::string path = ::testing::TempDir() + "/fault_integration_bad.json";
  {
    std::ofstream out(path);
    out << R"({"rules": [{"name": "typo", "operation": "mem_alock",
               "error": "OUT_OF_MEMORY"}]})";
  }
  ::setenv("XAL_FAULT_PLAN", path.c_str(), 1);
  init(nullptr);
  const auto b = backend(0);
  EXPECT_EQ(b.state, static_cast<uint32_t>(XAL_BACKEND_STATE_FAILED));
  EXPECT_NE(std::string(b.reason).find(path + ": rule 0 ('typo'): unknown "
                                              "operation 'mem_alock'"),
            std::string::npos)
      << b.reason;
  std::remove(path.c_str());
}

TEST_F(Integration, PlanNamesTheTarget) {
  const std::string path = ::testing::TempDir() + "/fault_integration_target.json";
  {
    std::ofstream out(path);
    out << R"({"target": "mock", "rules": [{"name": "third",
               "operation": "mem_alloc", "nth": 3, "error": "OUT_OF_MEMORY"}]})";
  }
  ::unsetenv("XAL_BACKENDS");  // the core loads fault in place of the target
  ::setenv("XAL_FAULT_PLAN", path.c_str(), 1);
  init(nullptr);
  uint32_t n = 0;
  ASSERT_EQ(xal_backend_count(&n), XAL_SUCCESS);
  bool found = false;
  for (uint32_t i = 0; i < n; ++i) {
    const auto b = backend(i);
    EXPECT_STRNE(b.name, "mock") << "the target must not also load alone";
    if (std::string(b.name) == "fault(mock)") {
      found = true;
      EXPECT_EQ(b.state, static_cast<uint32_t>(XAL_BACKEND_STATE_LOADED));
    }
  }
  EXPECT_TRUE(found);
  xal_fault_rule_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_fault_rule_get_info(0, &info), XAL_SUCCESS);
  EXPECT_STREQ(info.name, "third");
  std::remove(path.c_str());
}

TEST_F(Integration, ErrorCarriesTheVendorCode) {
  init("profile=hip;mem_alloc=device(1)nth(2)OUT_OF_MEMORY");
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(xal_mem_alloc(dev(1), 256, &a), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_alloc(dev(1), 256, &b), XAL_ERROR_OUT_OF_MEMORY);
  const auto e = last();
  EXPECT_EQ(e.status, XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(e.vendor_code, 2);
  EXPECT_STREQ(e.vendor_name, "hipErrorOutOfMemory");
  EXPECT_NE(std::string(e.message).find("rule 'rule0'"), std::string::npos)
      << e.message;
  ASSERT_EQ(xal_mem_alloc(dev(1), 256, &b), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev(1), a), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev(1), b), XAL_SUCCESS);
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["device"], 1);
  EXPECT_EQ(lines[0]["vendor_name"], "hipErrorOutOfMemory");
}

// A free the backend refuses leaves the allocation where it was, in xal's
// records too: the memory is still counted and the free can be retried.
TEST_F(Integration, FailedFreeKeepsTheAllocation) {
  init("mem_free=nth(1)BACKEND");
  xal_devptr_t a = 0;
  ASSERT_EQ(xal_mem_alloc(dev(0), 256, &a), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev(0), a), XAL_ERROR_BACKEND);
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_EQ(xal_device_get_metrics(dev(0), &m), XAL_SUCCESS);
  EXPECT_EQ(m.xal_alloc_count_current, 1u);
  EXPECT_EQ(m.xal_alloc_bytes_current, 256u);
  EXPECT_EQ(xal_mem_free(dev(0), a), XAL_SUCCESS);  // the retry frees it
  ASSERT_EQ(xal_device_get_metrics(dev(0), &m), XAL_SUCCESS);
  EXPECT_EQ(m.xal_alloc_count_current, 0u);
  EXPECT_EQ(xal_mem_free(dev(0), a), XAL_ERROR_INVALID_ARGUMENT);  // and only once
}

// The same for a stream and an event whose destroy the backend refuses:
// the handle stays valid, and destroying it again works.
TEST_F(Integration, FailedDestroyKeepsTheHandle) {
  init("stream_destroy=nth(1)BACKEND;event_destroy=nth(1)BACKEND");
  xal_stream_t s = nullptr;
  xal_event_t e = nullptr;
  ASSERT_EQ(xal_stream_create(dev(0), 0, &s), XAL_SUCCESS);
  ASSERT_EQ(xal_event_create(dev(0), 0, &e), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(s), XAL_ERROR_BACKEND);
  EXPECT_EQ(xal_event_destroy(e), XAL_ERROR_BACKEND);
  EXPECT_EQ(xal_event_record(e, s), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(xal_event_destroy(e), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_query(s), XAL_ERROR_INVALID_HANDLE);
}

TEST_F(Integration, StickyErrorHealthAndReset) {
  init("memcpy_htod=nth(1)cuda:CUDA_ERROR_ECC_UNCORRECTABLE");
  xal_stream_t s = nullptr;
  ASSERT_EQ(xal_stream_create(dev(0), 0, &s), XAL_SUCCESS);
  xal_devptr_t p = 0;
  ASSERT_EQ(xal_mem_alloc(dev(0), 1024, &p), XAL_SUCCESS);
  std::vector<uint8_t> buf(1024, 1);
  EXPECT_EQ(xal_memcpy_htod(s, p, buf.data(), buf.size()), XAL_ERROR_HARDWARE);
  EXPECT_EQ(last().vendor_code, 214);
  EXPECT_EQ(xal_stream_synchronize(s), XAL_ERROR_HARDWARE);
  xal_devptr_t q = 0;
  EXPECT_EQ(xal_mem_alloc(dev(0), 1024, &q), XAL_ERROR_HARDWARE);
  const auto h = health(dev(0));
  EXPECT_EQ(h.state, static_cast<uint32_t>(XAL_HEALTH_ERROR));
  EXPECT_EQ(h.sticky_status, XAL_ERROR_HARDWARE);
  EXPECT_EQ(h.vendor_code, 214);
  EXPECT_EQ(health(dev(1)).state, static_cast<uint32_t>(XAL_HEALTH_OK));
  ASSERT_EQ(xal_device_reset(dev(0)), XAL_SUCCESS);
  EXPECT_EQ(health(dev(0)).state, static_cast<uint32_t>(XAL_HEALTH_OK));
  // The device works again.
  ASSERT_EQ(xal_stream_create(dev(0), 0, &s), XAL_SUCCESS);
  ASSERT_EQ(xal_mem_alloc(dev(0), 1024, &q), XAL_SUCCESS);
  std::vector<uint8_t> back(1024, 0);
  ASSERT_EQ(xal_memcpy_htod(s, q, buf.data(), buf.size()), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_dtoh(s, back.data(), q, back.size()), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(buf, back);
  EXPECT_EQ(xal_stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev(0), q), XAL_SUCCESS);
}

TEST_F(Integration, DeviceLostFromATime) {
  init("profile=levelzero;*=device(1)after(0)1*device_lost");
  xal_devptr_t p = 0;
  EXPECT_EQ(xal_mem_alloc(dev(1), 64, &p), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last().vendor_code, 0x70000001);
  EXPECT_STREQ(last().vendor_name, "ZE_RESULT_ERROR_DEVICE_LOST");
  EXPECT_EQ(xal_device_synchronize(dev(1)), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(health(dev(1)).state, static_cast<uint32_t>(XAL_HEALTH_LOST));
  ASSERT_EQ(xal_device_reset(dev(1)), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_alloc(dev(1), 64, &p), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev(1), p), XAL_SUCCESS);
}

TEST_F(Integration, AsyncErrorAtSynchronize) {
  init("memset=nth(1)async(cuda:CUDA_ERROR_LAUNCH_FAILED)");
  xal_stream_t s = nullptr;
  ASSERT_EQ(xal_stream_create(dev(0), 0, &s), XAL_SUCCESS);
  xal_devptr_t p = 0;
  ASSERT_EQ(xal_mem_alloc(dev(0), 4096, &p), XAL_SUCCESS);
  EXPECT_EQ(xal_memset(s, p, 7, 4096), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_synchronize(s), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last().vendor_code, 719);
  EXPECT_EQ(health(dev(0)).state, static_cast<uint32_t>(XAL_HEALTH_LOST));
  ASSERT_EQ(xal_device_reset(dev(0)), XAL_SUCCESS);
  EXPECT_EQ(xal_device_synchronize(dev(0)), XAL_SUCCESS);
}

TEST_F(Integration, BitflipCorruptsSilently) {
  init("seed=3;memcpy_htod=nth(2)bitflip(3)");
  xal_stream_t s = nullptr;
  ASSERT_EQ(xal_stream_create(dev(0), 0, &s), XAL_SUCCESS);
  const size_t n = 1 << 16;
  xal_devptr_t p = 0;
  ASSERT_EQ(xal_mem_alloc(dev(0), n, &p), XAL_SUCCESS);
  std::vector<uint8_t> in(n), out(n);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint8_t>(i);
  for (int round = 1; round <= 3; ++round) {
    ASSERT_EQ(xal_memcpy_htod(s, p, in.data(), n), XAL_SUCCESS);
    ASSERT_EQ(xal_memcpy_dtoh(s, out.data(), p, n), XAL_SUCCESS);
    ASSERT_EQ(xal_stream_synchronize(s), XAL_SUCCESS);
    int bits = 0;
    for (size_t i = 0; i < n; ++i) bits += __builtin_popcount(in[i] ^ out[i]);
    // Three flips; two may land on the same bit and cancel.
    if (round == 2) {
      EXPECT_TRUE(bits == 3 || bits == 1) << bits;
    } else {
      EXPECT_EQ(bits, 0) << "round " << round;
    }
  }
  EXPECT_EQ(xal_stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev(0), p), XAL_SUCCESS);
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["flips"].size(), 3u);
}

TEST_F(Integration, HangEndsInTimeout) {
  ::setenv("XAL_COMM_TIMEOUT_MS", "40", 1);
  init("event_synchronize=nth(1)hang");
  xal_event_t e = nullptr;
  ASSERT_EQ(xal_event_create(dev(0), 0, &e), XAL_SUCCESS);
  EXPECT_EQ(xal_event_synchronize(e), XAL_ERROR_TIMEOUT);
  EXPECT_NE(std::string(last().message).find("timed out after 40 ms"),
            std::string::npos);
  EXPECT_EQ(xal_event_synchronize(e), XAL_SUCCESS);
  EXPECT_EQ(xal_event_destroy(e), XAL_SUCCESS);
}

// The plan's time-out comes before the communicator's (300 s by default),
// for the plan of the environment and for one loaded at run time.
TEST_F(Integration, CollectiveHangTakesThePlansTimeout) {
  init("timeout=50;allreduce=nth(1)hang");
  xal_device_t devs[2] = {dev(0), dev(1)};
  xal_comm_t comms[2] = {};
  ASSERT_EQ(xal_comm_create(devs, 2, nullptr, comms), XAL_SUCCESS) << last().message;
  xal_stream_t s = nullptr;
  xal_devptr_t buf = 0;
  ASSERT_EQ(xal_stream_create(dev(0), 0, &s), XAL_SUCCESS);
  ASSERT_EQ(xal_mem_alloc(dev(0), 64, &buf), XAL_SUCCESS);
  auto allreduce = [&] {
    return xal_allreduce(comms[0], buf, buf, 16, XAL_DTYPE_F32, XAL_OP_SUM, s);
  };
  EXPECT_EQ(allreduce(), XAL_ERROR_TIMEOUT);
  EXPECT_NE(std::string(last().message).find("timed out after 50 ms"),
            std::string::npos)
      << last().message;
  ASSERT_EQ(xal_fault_load_plan("timeout=60;allreduce=nth(1)hang", 0), XAL_SUCCESS);
  EXPECT_EQ(allreduce(), XAL_ERROR_TIMEOUT);
  EXPECT_NE(std::string(last().message).find("timed out after 60 ms"),
            std::string::npos)
      << last().message;
  ASSERT_EQ(xal_fault_clear(), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev(0), buf), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(s), XAL_SUCCESS);
  for (xal_comm_t c : comms) EXPECT_EQ(xal_comm_destroy(c), XAL_SUCCESS);
}

TEST_F(Integration, DelayStillSucceeds) {
  init("stream_create=delay(3)");
  xal_stream_t s = nullptr;
  ASSERT_EQ(xal_stream_create(dev(1), 0, &s), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(s), XAL_SUCCESS);
  ASSERT_EQ(log_lines().size(), 1u);
}

TEST_F(Integration, AbortEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        ::setenv("XAL_FAULTS", "mem_get_info=abort", 1);
        xal_init(nullptr);
        xal_device_t d = nullptr;
        xal_device_get(0, &d);
        uint64_t f = 0;
        uint64_t t = 0;
        xal_mem_get_info(d, &f, &t);
      },
      "");
}

TEST_F(Integration, ControlFromInsideTheProgram) {
  init("");
  uint32_t n = 5;
  ASSERT_EQ(xal_fault_rule_count(&n), XAL_SUCCESS);
  EXPECT_EQ(n, 0u);
  ASSERT_EQ(xal_fault_load_plan(
                R"({"rules": [{"name": "oom", "operation": "mem_alloc",
                    "error": "OUT_OF_MEMORY", "every": 2}]})",
                XAL_FAULT_PLAN_REPLACE),
            XAL_SUCCESS);
  EXPECT_EQ(xal_fault_load_plan("mem_alloc=probability", 0),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last().message).find("rule 0"), std::string::npos)
      << last().message;
  EXPECT_EQ(xal_fault_load_plan(nullptr, 0), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(xal_fault_rule_count(&n), XAL_SUCCESS);
  EXPECT_EQ(n, 1u);
  xal_devptr_t p = 0, q = 0;
  ASSERT_EQ(xal_mem_alloc(dev(0), 64, &p), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_alloc(dev(0), 64, &q), XAL_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(xal_fault_set_rule_enabled("oom", 0), XAL_SUCCESS);
  EXPECT_EQ(xal_fault_set_rule_enabled("missing", 0), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(xal_mem_alloc(dev(0), 64, &q), XAL_SUCCESS);
  xal_fault_rule_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_fault_rule_get_info(0, &info), XAL_SUCCESS);
  EXPECT_STREQ(info.name, "oom");
  EXPECT_EQ(info.enabled, 0);
  EXPECT_EQ(info.matched, 2u);
  EXPECT_EQ(info.fired, 1u);
  EXPECT_EQ(xal_fault_rule_get_info(1, &info), XAL_ERROR_INVALID_ARGUMENT);
  xal_fault_counters_t c{};
  c.struct_size = sizeof c;
  ASSERT_EQ(xal_fault_get_counters(&c), XAL_SUCCESS);
  EXPECT_EQ(c.injected, 1u);
  EXPECT_GE(c.calls, 3u);
  ASSERT_EQ(xal_fault_clear(), XAL_SUCCESS);
  ASSERT_EQ(xal_fault_rule_count(&n), XAL_SUCCESS);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(xal_mem_free(dev(0), p), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(dev(0), q), XAL_SUCCESS);
}

TEST_F(Integration, WithoutFaultBackend) {
  ::setenv("XAL_BACKENDS", "mock", 1);
  init(nullptr);  // no XAL_FAULTS: nothing asks for the fault backend
  uint32_t n = 0;
  EXPECT_EQ(xal_fault_rule_count(&n), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(std::string(last().message).find("no fault backend"),
            std::string::npos);
}

}  // namespace

// Point-to-point reaches the fault backend's comm_send and comm_recv (so
// that `xal-fault sweep --op comm_send` finds its call sites): an injected
// error is the call's; without one the mock, which has no point-to-point of
// its own, leaves the messages to the core and they arrive.
TEST_F(Integration, PointToPointEntriesAreInjectable) {
  init("comm_send=nth(1)BACKEND;comm_recv=nth(2)INTERNAL");
  xal_device_t devs[2] = {dev(0), dev(1)};
  xal_comm_t comms[2] = {};
  ASSERT_EQ(xal_comm_create(devs, 2, nullptr, comms), XAL_SUCCESS) << last().message;
  xal_stream_t s[2] = {};
  xal_devptr_t buf[2] = {};
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(xal_stream_create(devs[r], 0, &s[r]), XAL_SUCCESS);
    ASSERT_EQ(xal_mem_alloc(devs[r], 64, &buf[r]), XAL_SUCCESS);
  }
  EXPECT_EQ(xal_send(comms[0], buf[0], 16, XAL_DTYPE_F32, 1, s[0]), XAL_ERROR_BACKEND);
  EXPECT_NE(std::string(last().message).find("comm_send"), std::string::npos) << last().message;
  const std::vector<float> ones(16, 1.0f);
  ASSERT_EQ(xal_memcpy_htod(s[0], buf[0], ones.data(), 64), XAL_SUCCESS);
  ASSERT_EQ(xal_send(comms[0], buf[0], 16, XAL_DTYPE_F32, 1, s[0]), XAL_SUCCESS) << last().message;
  ASSERT_EQ(xal_recv(comms[1], buf[1], 16, XAL_DTYPE_F32, 0, s[1]), XAL_SUCCESS) << last().message;
  EXPECT_EQ(xal_stream_synchronize(s[0]), XAL_SUCCESS) << last().message;
  EXPECT_EQ(xal_stream_synchronize(s[1]), XAL_SUCCESS) << last().message;
  std::vector<float> out(16, 0.0f);
  ASSERT_EQ(xal_memcpy_dtoh(s[1], out.data(), buf[1], 64), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(s[1]), XAL_SUCCESS);
  EXPECT_EQ(out, ones);
  EXPECT_EQ(xal_recv(comms[1], buf[1], 16, XAL_DTYPE_F32, 0, s[1]), XAL_ERROR_INTERNAL);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(xal_stream_destroy(s[r]), XAL_SUCCESS);
    EXPECT_EQ(xal_mem_free(devs[r], buf[r]), XAL_SUCCESS);
  }
  for (xal_comm_t c : comms) EXPECT_EQ(xal_comm_destroy(c), XAL_SUCCESS);
}
