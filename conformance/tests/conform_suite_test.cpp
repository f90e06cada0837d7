// Tests of xal-conform against suites that misbehave: one that writes a
// figure that is not a number, and the real suite run where it cannot see
// the devices the driver selected (its xal_init or its listing differs).
// Also how the driver runs them: started with SIGCHLD ignored, stopped by a
// signal, output that is not UTF-8, reports through symbolic links.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

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

namespace {

using namespace conform_test;

// Started with SIGCHLD ignored, the driver still sees its children end (it
// could not list the suite's tests: "waitpid: No child processes").
TEST_F(ConformCli, ListsItsTestsWhenStartedWithSigchldIgnored) {
  const pid_t pid = start_conform({"--list"}, kMock, path("out.txt"), true);
  EXPECT_EQ(wait_exit(pid, 120), 0) << read_text(path("out.txt"));
  EXPECT_NE(read_text(path("out.txt")).find("platform ("), std::string::npos)
      << read_text(path("out.txt"));
}

// A stand-in suite whose one test writes its pid to $STOP_PID_FILE and
// sleeps.
constexpr const char* kSleepingSuite = R"(#!/bin/sh
if [ "$1" = "--gtest_list_tests" ]; then
  printf 'slow/Slow.\n  Sleeps\n'
  exit 0
fi
echo '{"event":"start","test":"slow/Slow.Sleeps"}' >> "$XAL_CONFORM_EVENTS"
echo $$ > "$STOP_PID_FILE.tmp" && mv "$STOP_PID_FILE.tmp" "$STOP_PID_FILE"
exec sleep 30
)";

// SIGTERM to xal-conform ends the running suite process and removes the
// temporary folder; xal-conform exits with 128 + SIGTERM.
TEST_F(ConformCli, AStopSignalEndsTheSuiteProcessAndRemovesItsFolder) {
  const std::string suite = make_script(path("sleeping-suite.sh"), kSleepingSuite);
  fs::create_directory(dir_ / "tmp");
  auto env = kMock;
  env["STOP_PID_FILE"] = path("suite.pid");
  env["TMPDIR"] = path("tmp");
  const pid_t tool = start_conform({"--suite", suite}, env, path("out.txt"));
  pid_t sleeper = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sleeper == 0 && std::chrono::steady_clock::now() < until) {
    std::ifstream in(path("suite.pid"));
    long pid = 0;
    if (in >> pid) sleeper = static_cast<pid_t>(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(sleeper, 0) << read_text(path("out.txt"));
  ::kill(tool, SIGTERM);
  EXPECT_EQ(wait_exit(tool, 10), 128 + SIGTERM) << read_text(path("out.txt"));
  bool alive = true;
  for (int i = 0; i < 500 && alive; ++i) {
    alive = ::kill(sleeper, 0) == 0;
    if (alive) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (alive) ::kill(sleeper, SIGKILL);
  EXPECT_FALSE(alive) << "the suite process " << sleeper << " still runs";
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp")) << "the temporary folder is left";
  EXPECT_NE(read_text(path("out.txt")).find("stopped by SIGTERM"), std::string::npos)
      << read_text(path("out.txt"));
}

// A stand-in suite whose one test prints 2000 "é", a byte that is not
// UTF-8 and a control character, then aborts: the tail of its output in the
// message is cut inside an "é".
constexpr const char* kGarblingSuite = R"(#!/bin/sh
if [ "$1" = "--gtest_list_tests" ]; then
  printf 'crash/Crash.\n  Garbles\n'
  exit 0
fi
echo '{"event":"start","test":"crash/Crash.Garbles"}' >> "$XAL_CONFORM_EVENTS"
i=0
while [ $i -lt 2000 ]; do printf '\303\251'; i=$((i + 1)); done
printf '\377\001 done!\n'
kill -ABRT $$
)";

// JUnit XML stays readable to XML parsers whatever the suite printed.
TEST_F(ConformCli, JunitIsUtf8WhateverTheSuitePrinted) {
  const std::string suite = make_script(path("garbling-suite.sh"), kGarblingSuite);
  const Outcome o = conform({"--suite", suite, "--junit", path("r.xml"), "--report",
                             path("r.json")}, kMock);
  EXPECT_EQ(o.rc, 1) << o.output;
  const std::string xml = read_text(path("r.xml"));
  EXPECT_NE(xml.find("SIGABRT"), std::string::npos) << xml;
  EXPECT_NE(xml.find("\xef\xbf\xbd? done!"), std::string::npos) << xml;
  const size_t bad = xml_text_problem(xml);
  EXPECT_EQ(bad, std::string::npos) << "at byte " << bad << ": " << xml.substr(bad, 40);
  EXPECT_TRUE(read_json(path("r.json")).is_object());
}

// --report and --junit through symbolic links write the files they name
// (the links were replaced by regular files).
TEST_F(ConformCli, ReportsAreWrittenThroughSymbolicLinks) {
  const std::string suite = make_script(path("fake-suite.sh"), kFakeSuite);
  std::ofstream(path("real.json")) << "old";
  fs::create_directory(dir_ / "out");
  fs::create_symlink("real.json", dir_ / "report.json");
  fs::create_symlink("out/real.xml", dir_ / "junit.xml");  // not there yet
  const Outcome o = conform({"--suite", suite, "--report", path("report.json"), "--junit",
                             path("junit.xml")}, kMock);
  EXPECT_EQ(o.rc, 0) << o.output;
  EXPECT_TRUE(fs::is_symlink(dir_ / "report.json"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "junit.xml"));
  EXPECT_EQ(read_json(path("real.json"))["result"], "passed");
  EXPECT_NE(read_text(path("out/real.xml")).find("<testsuites"), std::string::npos);
}

}  // namespace
