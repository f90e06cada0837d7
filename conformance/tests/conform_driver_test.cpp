// Unit tests of xal-conform's child processes (driver/child.hpp) and of
// the runner's time limits (driver/runner.hpp).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "child.hpp"
#include "runner.hpp"

namespace {

namespace fs = std::filesystem;
using conform_driver::run_child;

class RunChild : public testing::Test {
 protected:
  void SetUp() override {
    std::string base = (fs::temp_directory_path() / "xal-conform-child-XXXXXX").string();
    ASSERT_NE(::mkdtemp(base.data()), nullptr);
    dir_ = base;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

// The pid a child wrote into `file`, or 0 while it has not.
pid_t read_pid(const std::string& file) {
  std::ifstream in(file);
  long pid = 0;
  return in >> pid ? static_cast<pid_t>(pid) : 0;
}

TEST_F(RunChild, ExitCodeAndOutput) {
  const auto r = run_child({"/bin/sh", "-c", "echo out; exit 3"}, {{"X", "1"}}, path("log"), 60,
                           nullptr);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(conform_driver::file_tail(path("log"), 100).find("out"), std::string::npos);
}

// An exception out of `poll` (a bad event, say) leaves run_child with the
// child killed and reaped: it must not go on running without its driver.
TEST_F(RunChild, ThrowingPollKillsTheChild) {
  const std::string pid_file = path("pid");
  pid_t pid = 0;
  auto poll = [&] {
    pid = read_pid(pid_file);
    if (pid > 0) throw std::runtime_error("bad event");
    return false;
  };
  EXPECT_THROW(run_child({"/bin/sh", "-c", "echo $$ > '" + pid_file + ".tmp' && mv '" + pid_file +
                                               ".tmp' '" + pid_file + "' && exec sleep 600"},
                         {}, path("log"), 600, poll),
               std::runtime_error);
  ASSERT_GT(pid, 0);
  const bool alive = ::kill(pid, 0) == 0;
  const int error = errno;
  if (alive) ::kill(pid, SIGKILL);  // do not leave it behind
  EXPECT_FALSE(alive) << "the child " << pid << " still runs (or was not reaped)";
  EXPECT_TRUE(alive || error == ESRCH) << "kill(pid, 0): errno " << error;
}

}  // namespace

namespace {

// A stand-in suite: announces one test in the events file, then hangs.
std::string hanging_suite(const std::string& path) {
  std::ofstream out(path);
  out << "#!/bin/sh\n"
         "printf '{\"event\":\"start\",\"test\":\"g/T.Hangs\"}\\n' >> \"$XAL_CONFORM_EVENTS\"\n"
         "exec sleep 60\n";
  out.close();
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

conform_driver::RunResult run_hanging(const std::string& dir, double test_s, double group_s) {
  conform_driver::RunnerOptions o;
  o.suite_path = hanging_suite(dir + "/suite.sh");
  o.work_dir = dir;
  o.test_timeout_s = test_s;
  o.group_timeout_s = group_s;
  conform_driver::TestList list;
  list.groups = {"g"};
  list.tests["g"] = {"g/T.Hangs"};
  return conform_driver::run_groups(o, list, {"g"}, {});
}

}  // namespace

// The limit that ended the test is the one its message names.
TEST_F(RunChild, TheGroupLimitIsNamedWhenItEndsARunningTest) {
  const auto r = run_hanging(dir_.string(), 100, 1);
  ASSERT_EQ(r.tests.size(), 1u);
  EXPECT_EQ(r.tests[0].outcome, conform_driver::kFailed);
  EXPECT_NE(r.tests[0].message.find("the group passed its time limit of 1 s"),
            std::string::npos) << r.tests[0].message;
}

TEST_F(RunChild, TheTestLimitIsNamedWhenItEndsARunningTest) {
  const auto r = run_hanging(dir_.string(), 1, 100);
  ASSERT_EQ(r.tests.size(), 1u);
  EXPECT_EQ(r.tests[0].outcome, conform_driver::kFailed);
  EXPECT_NE(r.tests[0].message.find("timed out: still running after 1 s"),
            std::string::npos) << r.tests[0].message;
}
