// Tests of xal-conform against suites that misbehave: one that writes a
// figure that is not a number, and the real suite run where it cannot see
// the devices the driver selected (its xal_init or its listing differs).
#include <sys/stat.h>

#include <string>

#include "cli_harness.hpp"

namespace {

using namespace conform_test;

// A stand-in suite (a shell script): lists one test, and when run writes its
// events, among them figures whose value is null (what nlohmann writes for
// NaN or infinity) or text.
constexpr const char* kFakeSuite = R"(#!/bin/sh
if [ "$1" = "--gtest_list_tests" ]; then
  printf 'fake/Fake.\n  Figures\n'
  exit 0
fi
t='"test":"fake/Fake.Figures"'
{
  echo '{"event":"start",'"$t"'}'
  echo '{"event":"devices",'"$t"',"devices":[0,"one"]}'
  echo '{"event":"figure",'"$t"',"name":"nan_rate","value":null,"unit":"GB/s","device":0}'
  echo '{"event":"figure",'"$t"',"name":"text_rate","value":"fast","unit":7,"device":"d0"}'
  echo '{"event":"figure",'"$t"',"name":"rate","value":2.5,"unit":"GB/s","device":0}'
  echo '{"event":"end",'"$t"',"outcome":"passed","message":null,"duration_ms":null}'
} >> "$XAL_CONFORM_EVENTS"
)";

std::string make_script(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), 0755);
  return path;
}

// A figure that is not a finite number is reported with value null, and
// the run goes on (no exception out of the event reader).
TEST_F(ConformCli, FigureThatIsNotANumberIsReportedAsMissing) {
  const std::string suite = make_script(path("fake-suite.sh"), kFakeSuite);
  const Outcome o = conform({"--suite", suite, "--report", path("r.json")}, kMock);
  EXPECT_EQ(o.rc, 0) << o.output;
  EXPECT_EQ(o.output.find("json.exception"), std::string::npos) << o.output;
  const json r = read_json(path("r.json"));
  ASSERT_TRUE(r.is_object()) << o.output;
  EXPECT_EQ(r["result"], "passed");
  const json* t = find_test(r, "fake/Fake.Figures");
  ASSERT_NE(t, nullptr) << o.output;
  EXPECT_EQ((*t)["outcome"], "passed");
  ASSERT_EQ(r["figures"].size(), 3u) << r["figures"];
  EXPECT_EQ(r["figures"][0]["name"], "nan_rate");
  EXPECT_TRUE(r["figures"][0]["value"].is_null()) << r["figures"][0];
  EXPECT_EQ(r["figures"][0]["device"], 0);
  EXPECT_EQ(r["figures"][1]["name"], "text_rate");
  EXPECT_TRUE(r["figures"][1]["value"].is_null()) << r["figures"][1];
  EXPECT_TRUE(r["figures"][1]["device"].is_null()) << r["figures"][1];
  EXPECT_EQ(r["figures"][2]["value"], 2.5);
}

// The real suite behind a wrapper that changes its environment only: the
// driver selects devices 0 and 1 of its mock cards, the suite does not have
// them. Every device test of the group must fail, none be "unsupported".
class ConformWrappedSuite : public ConformCli {
 protected:
  void expect_device_tests_fail(const std::string& wrapper_env, const std::string& expected) {
    const std::string suite = make_script(
        path("wrapped-suite.sh"),
        "#!/bin/sh\nexport " + wrapper_env + "\nexec " + quote(XAL_CONFORM_SUITE) + " \"$@\"\n");
    const Outcome o = conform(
        {"--suite", suite, "--quick", "--group", "memory", "--report", path("r.json")}, kMock);
    EXPECT_EQ(o.rc, 1) << o.output;
    const json r = read_json(path("r.json"));
    ASSERT_TRUE(r.is_object()) << o.output;
    EXPECT_EQ(r["result"], "failed");
    EXPECT_EQ(r["summary"]["unsupported"], 0) << r["summary"];
    const json* t = find_test(r, "memory/Memory.AllocFree/no_device");
    ASSERT_NE(t, nullptr) << o.output;
    EXPECT_EQ((*t)["outcome"], "failed");
    EXPECT_NE((*t)["message"].get<std::string>().find(expected), std::string::npos)
        << (*t)["message"];
  }
};

TEST_F(ConformWrappedSuite, SuiteThatFindsNoneOfTheSelectedDevicesFails) {
  expect_device_tests_fail("XAL_BACKENDS=/nonexistent/libxal_backend_none.so",
                           "XAL_CONFORM_DEVICES selects device(s) 0,1");
}

TEST_F(ConformWrappedSuite, SuiteWhoseXalInitFailsFails) {
  expect_device_tests_fail("XAL_DEVICE_SELECTOR='mock:['", "xal_init failed in the suite");
}

// Every group's fixture survives the placeholder test (no device to tear
// down): the reason is reported, not a crash.
TEST_F(ConformWrappedSuite, EveryGroupReportsTheReasonWithoutCrashing) {
  const std::string suite = make_script(
      path("wrapped-suite.sh"),
      "#!/bin/sh\nexport XAL_DEVICE_SELECTOR='mock:['\nexec " + quote(XAL_CONFORM_SUITE) +
          " \"$@\"\n");
  const Outcome o = conform({"--suite", suite, "--quick", "--report", path("r.json")}, kMock);
  EXPECT_EQ(o.rc, 1) << o.output;
  const json r = read_json(path("r.json"));
  ASSERT_TRUE(r.is_object()) << o.output;
  size_t placeholders = 0;
  for (const json& t : r["tests"]) {
    const std::string message = t["message"].get<std::string>();
    EXPECT_EQ(message.find("killed by signal"), std::string::npos) << t["name"] << ": " << message;
    if (t["name"].get<std::string>().find("no_device") == std::string::npos) continue;
    ++placeholders;
    EXPECT_EQ(t["outcome"], "failed") << t["name"];
    EXPECT_NE(message.find("xal_init failed in the suite"), std::string::npos)
        << t["name"] << ": " << message;
  }
  EXPECT_GT(placeholders, 0u) << o.output;
}

}  // namespace
