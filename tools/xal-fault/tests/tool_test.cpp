// xal-fault's reporting: how a run ended, and the injection log's summary.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "log_summary.hpp"
#include "runner.hpp"

namespace xal::faulttool {
namespace {

TEST(Describe, TimeOutIsPrintedAsGiven) {
  Outcome o;
  o.started = true;
  o.timed_out = true;
  EXPECT_EQ(describe(o, 0.5), "timed out after 0.5 s");
  EXPECT_EQ(describe(o, 60), "timed out after 60 s");
  EXPECT_EQ(shell_status(o), 124);
}

// With SIGCHLD ignored the command's status is lost: waitpid fails, and
// that must never read as "exit 0" (it did).
TEST(RunCommand, ALostStatusIsAnErrorNotExitZero) {
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &old), 0);
  const Outcome o = run_command({"sh", "-c", "kill -ABRT $$"}, {}, 30, true);
  ::sigaction(SIGCHLD, &old, nullptr);
  ASSERT_TRUE(o.started) << o.start_error;
  EXPECT_NE(o.wait_error.find("waitpid"), std::string::npos);
  EXPECT_NE(describe(o, 30), "exit 0");
  EXPECT_NE(shell_status(o), 0);
}

class LogSummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path = ::testing::TempDir() + "/xal_fault_tool_test_" + std::to_string(::getpid());
    std::remove(path.c_str());
  }
  void TearDown() override { std::remove(path.c_str()); }
  std::string path;
};

TEST_F(LogSummaryTest, MissingLogIsNotFound) {
  const LogSummary s = summarize_log(path);
  EXPECT_FALSE(s.found);
  EXPECT_EQ(s.injections, 0u);
}

TEST_F(LogSummaryTest, StartFailureIsNotAnInjection) {
  {
    std::ofstream out(path);
    out << R"({"event":"start_failed","pid":1,"status":"XAL_ERROR_BACKEND_UNAVAILABLE",)"
        << R"("reason":"fault: target backend 'nosuch' could not be loaded"})" << "\n"
        << R"({"action":"error","operation":"mem_alloc","rule":"oom",)"
        << R"("status":"XAL_ERROR_OUT_OF_MEMORY"})" << "\n";
  }
  const LogSummary s = summarize_log(path);
  EXPECT_TRUE(s.found);
  ASSERT_EQ(s.start_failures.size(), 1u);
  EXPECT_EQ(s.start_failures[0], "fault: target backend 'nosuch' could not be loaded");
  EXPECT_EQ(s.injections, 1u);
  EXPECT_EQ(s.rules.at("oom").fired, 1u);
}

}  // namespace
}  // namespace xal::faulttool
