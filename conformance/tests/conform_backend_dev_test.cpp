// xal-conform --backend-dev, for backend authors: one group or one test of
// one backend, every call of its plugin table traced with its arguments and
// status, and nothing run after the first failure.
#include <string>
#include <vector>

#include "cli_harness.hpp"

namespace {

using namespace conform_test;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

TEST_F(ConformCli, BackendDevNeedsABackendAndOneGroupOrTest) {
  Outcome o = conform({"--backend-dev", "--group", "memory"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find("--backend-dev needs --backend NAME"), std::string::npos) << o.output;
  o = conform({"--backend-dev", "--backend", "mock"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find("one group (--group) or one test (--test)"), std::string::npos)
      << o.output;
  o = conform({"--backend-dev", "--backend", "mock", "--group", "memory", "--group", "copies"},
              kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  o = conform({"--test", "memory/Memory.NoSuchTest/d0_mock"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find("unknown test 'memory/Memory.NoSuchTest/d0_mock'"), std::string::npos)
      << o.output;
}

// One test, traced: the entries it calls, with their arguments and status.
TEST_F(ConformCli, BackendDevTracesEveryTableCallOfOneTest) {
  const std::string test = "memory/Memory.AllocFree/d0_mock";
  const Outcome o = conform({"--backend-dev", "--backend", "mock", "--quick", "--test", test,
                             "--report", path("r.json")},
                            kMock);
  EXPECT_EQ(o.rc, 0) << o.output;
  EXPECT_NE(o.output.find("xal-trace: tracing every table entry of mock"), std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("xal-trace: mock.init("), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("xal-trace: mock.device_count(0x"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("xal-trace: mock.mem_alloc(0x"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find(") -> XAL_SUCCESS"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("xal-trace: mock.mem_free(0x"), std::string::npos) << o.output;
  const json r = read_json(path("r.json"));
  ASSERT_EQ(r["tests"].size(), 1u) << o.output;
  EXPECT_EQ(r["tests"][0]["name"], test);
  EXPECT_EQ(r["tests"][0]["outcome"], "passed");
}

// A failure ends the run: nothing after the failed test runs, and its
// failing call is in the trace.
TEST_F(ConformCli, BackendDevStopsAtTheFirstFailure) {
  const Outcome all = conform({"--quick", "--group", "memory", "--report", path("all.json")},
                              shim("overreport-memory", "1*a100-40g"));
  ASSERT_EQ(all.rc, 1) << all.output;
  const Outcome o = conform({"--backend-dev", "--backend", "shim", "--quick", "--group",
                             "memory", "--report", path("r.json")},
                            shim("overreport-memory", "1*a100-40g"));
  EXPECT_EQ(o.rc, 1) << o.output;
  const json r = read_json(path("r.json"));
  ASSERT_FALSE(r["tests"].empty()) << o.output;
  std::vector<std::string> failed;
  for (const json& t : r["tests"]) {
    if (t["outcome"] == "failed") failed.push_back(t["name"].get<std::string>());
  }
  EXPECT_EQ(failed, std::vector<std::string>{"memory/Memory.UpToCapacityAndPast/d0_shim"})
      << o.output;
  // The group's tests after it did not run (nor are they reported skipped).
  EXPECT_LT(r["tests"].size(), read_json(path("all.json"))["tests"].size()) << o.output;
  EXPECT_EQ(find_test(r, "memory/Memory.Quota/d0_shim"), nullptr) << o.output;
  EXPECT_GT(count(o.output, "xal-trace: shim.mem_get_info("), 0u) << o.output;
}

}  // namespace
