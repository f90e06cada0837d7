// The tools' child-process runner (xal_common/child_process.hpp): exit
// codes, environment, output to a file, time limits, a command that does
// not start, poll stopping the child.
#include "xal_common/child_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace xal::common {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ChildProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = ::testing::TempDir() + "/xal_child_process_test_" + std::to_string(::getpid());
    std::remove(log_.c_str());
  }
  void TearDown() override { std::remove(log_.c_str()); }
  std::string log_;
};

TEST_F(ChildProcess, ExitCodeEnvironmentAndOutputFile) {
  ChildOptions o;
  o.argv = {"sh", "-c", "echo \"value=$XAL_CHILD_TEST\"; exit 3"};
  o.env = {{"XAL_CHILD_TEST", "42"}};
  o.output = ChildOptions::Output::file;
  o.output_path = log_;
  const ChildOutcome out = run_child(o);
  ASSERT_TRUE(out.started) << out.start_error;
  EXPECT_EQ(out.exit_code, 3);
  EXPECT_EQ(out.signal, 0);
  EXPECT_FALSE(out.timed_out);
  EXPECT_EQ(read_all(log_), "value=42\n");
}

TEST_F(ChildProcess, ACommandThatDoesNotStartSaysWhy) {
  ChildOptions o;
  o.argv = {"/nonexistent/xal-no-such-program"};
  o.search_path = false;
  const ChildOutcome out = run_child(o);
  EXPECT_FALSE(out.started);
  EXPECT_NE(out.start_error.find("cannot run '/nonexistent/xal-no-such-program'"),
            std::string::npos)
      << out.start_error;
}

TEST_F(ChildProcess, TheTimeLimitKillsTheGroup) {
  ChildOptions o;
  o.argv = {"sh", "-c", "sleep 30"};
  o.timeout_s = 0.2;
  o.output = ChildOptions::Output::null;
  const ChildOutcome out = run_child(o);
  ASSERT_TRUE(out.started);
  EXPECT_TRUE(out.timed_out);
  EXPECT_EQ(out.signal, 0);
  EXPECT_LT(out.seconds, 20.0);
}

TEST_F(ChildProcess, PollStopsTheChildAndRunsOnceMoreAtTheEnd) {
  int calls = 0;
  ChildOptions o;
  o.argv = {"sleep", "30"};
  o.poll = [&] { return ++calls >= 3; };
  o.poll_interval = std::chrono::milliseconds(5);
  const ChildOutcome out = run_child(o);
  EXPECT_TRUE(out.timed_out);
  EXPECT_GE(calls, 4);
}

TEST(SignalText, NamesAndDescribes) {
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_text(SIGSEGV), "SIGSEGV (Segmentation fault)");
}

}  // namespace
}  // namespace xal::common
