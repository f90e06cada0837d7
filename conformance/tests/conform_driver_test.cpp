// Unit tests of xal-conform's child processes (driver/child.hpp), of the
// runner's time limits (driver/runner.hpp) and of writing reports
// (driver/report.hpp: XML text, files through symbolic links).
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
#include "report.hpp"
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

namespace {

using conform_driver::file_tail;

// Whether `text` is UTF-8 that XML 1.0 allows (see cli_harness.hpp's
// xml_text_problem; a copy, this target has no harness).
bool xml_text_ok(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return false;
      ++i;
      continue;
    }
    const size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (n == 0 || c > 0xF4 || i + n > text.size()) return false;
    uint32_t code = c & (0x7Fu >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      code = (code << 6) | (b & 0x3Fu);
    }
    const uint32_t least = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    if (code < least || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF) ||
        code == 0xFFFE || code == 0xFFFF) {
      return false;
    }
    i += n;
  }
  return true;
}

}  // namespace

// A tail is cut at the start of a character, never inside one.
TEST_F(RunChild, FileTailStartsOnACharacter) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "\xc3\xa9";  // é
  text += "end";
  std::ofstream(path("log"), std::ios::binary) << text;
  const std::string tail = file_tail(path("log"), 3000);  // from inside an é
  EXPECT_TRUE(xml_text_ok(tail));
  EXPECT_EQ(tail, "..." + text.substr(text.size() - 2999));  // the cut é left out
  EXPECT_EQ(file_tail(path("log"), 3001), "..." + text.substr(text.size() - 3001));
}

// Escaped text is UTF-8 that XML allows: bytes that are not UTF-8 (stray,
// cut, overlong, surrogates) become U+FFFD, control characters '?'.
TEST(XmlEscape, LeavesOnlyTextXmlAllows) {
  using conform_driver::xml_escape;
  EXPECT_EQ(xml_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
  EXPECT_EQ(xml_escape("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  const std::string bad = "x\xff y\xc3 z\xc0\xaf \xed\xa0\x80 \xef\xbf\xbf \x01\t\n";
  const std::string out = xml_escape(bad);
  EXPECT_TRUE(xml_text_ok(out)) << out;
  EXPECT_EQ(out.substr(0, 4), "x\xef\xbf\xbd");
  EXPECT_NE(out.find("?\t\n"), std::string::npos) << out;
  // A failed test's message with all of it: the JUnit XML is well formed.
  conform_driver::RunResult run;
  conform_driver::TestResult t;
  t.name = "g/T.Bad";
  t.group = "g";
  t.outcome = conform_driver::kFailed;
  t.message = "killed\xff\n" + bad;
  run.tests.push_back(t);
  EXPECT_TRUE(xml_text_ok(conform_driver::junit_report(run)));
}

// Reports are written to the file a symbolic link names; the link stays.
TEST_F(RunChild, WriteFileFollowsSymbolicLinks) {
  std::ofstream(path("real.json")) << "old";
  fs::create_symlink("real.json", dir_ / "link.json");
  fs::create_symlink(path("new.json"), dir_ / "dangling.json");
  for (const char* link : {"link.json", "dangling.json"}) {
    EXPECT_EQ(conform_driver::check_writable(path(link)), "");
    EXPECT_EQ(conform_driver::write_file(path(link), "new"), "");
    EXPECT_TRUE(fs::is_symlink(dir_ / link)) << link;
  }
  std::ifstream real(path("real.json")), made(path("new.json"));
  std::string a, b;
  EXPECT_TRUE(real >> a && a == "new") << a;
  EXPECT_TRUE(made >> b && b == "new") << b;
}

// The temporary file write_file needs is checked before the run too.
TEST_F(RunChild, CheckWritableChecksTheTemporaryFile) {
  fs::create_directory(dir_ / "r.json.tmp");
  const std::string problem = conform_driver::check_writable(path("r.json"));
  EXPECT_NE(problem.find("r.json.tmp"), std::string::npos) << problem;
  EXPECT_FALSE(fs::exists(dir_ / "r.json")) << "left behind";
}

// A group's process may always run one test to its own limit.
TEST(GroupTimeLimit, LeavesRoomForOneTest) {
  EXPECT_EQ(conform_driver::group_time_limit(600), 7200);
  EXPECT_GE(conform_driver::group_time_limit(10000), 10000 + 600);
}

// With SIGCHLD ignored the child's status is lost: that is an error, not
// an exit code, and the listing says so.
TEST_F(RunChild, ALostStatusIsAnError) {
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &old), 0);
  const auto r = run_child({"/bin/sh", "-c", "exit 0"}, {}, path("log"), 60, nullptr);
  conform_driver::RunnerOptions o;
  o.suite_path = "/bin/true";
  o.work_dir = dir_.string();
  const auto list = conform_driver::list_tests(o);
  ::sigaction(SIGCHLD, &old, nullptr);
  EXPECT_NE(r.wait_error.find("waitpid"), std::string::npos) << r.wait_error;
  EXPECT_NE(list.error.find("cannot tell how the suite process ended"), std::string::npos)
      << list.error;
}
