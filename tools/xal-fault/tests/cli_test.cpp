// xal-fault run as a program: how it ends when started with SIGCHLD
// ignored, when stopped by a signal, with the terminal as stdin, with a
// relative --log or TMPDIR, arguments that are not UTF-8, and a stdout that
// cannot be written. Every child is killed and reaped within a deadline.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How a run of xal-fault is set up.
struct ToolSetup {
  std::string dir;             // working directory ("" : the test's)
  std::string output;          // stdout and stderr go there
  std::string stdout_path;     // stdout alone goes there when given
  std::string tmpdir;          // TMPDIR when given
  bool ignore_sigchld = false;  // as a careless parent may leave it
};

// Starts xal-fault with `args`. The XAL_* variables of the test's own
// environment are removed (XAL_MOCK_DEVICES is one card).
pid_t start_tool(const std::vector<std::string>& args, const ToolSetup& s) {
  std::vector<std::string> argv = {XAL_FAULT_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> ptrs;
  for (auto& a : argv) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  for (const char* v : {"XAL_BACKENDS", "XAL_FAULT_PLAN", "XAL_FAULTS", "XAL_FAULT_LOG",
                        "XAL_FAULT_SEED", "XAL_DEVICE_SELECTOR", "XAL_BACKEND_PATH"}) {
    ::unsetenv(v);
  }
  ::setenv("XAL_MOCK_DEVICES", "1*a100-40g", 1);
  if (!s.tmpdir.empty()) ::setenv("TMPDIR", s.tmpdir.c_str(), 1);
  if (s.ignore_sigchld) ::signal(SIGCHLD, SIG_IGN);
  if (!s.dir.empty() && ::chdir(s.dir.c_str()) != 0) ::_exit(126);
  const int out = ::open(s.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) ::_exit(126);
  ::dup2(out, STDERR_FILENO);
  if (!s.stdout_path.empty()) {
    const int so = ::open(s.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (so < 0) ::_exit(126);
    ::dup2(so, STDOUT_FILENO);
  } else {
    ::dup2(out, STDOUT_FILENO);
  }
  ::execv(ptrs[0], ptrs.data());
  ::_exit(127);
}

// Waits up to `seconds` for `pid`: its exit code, 128 + the signal that
// killed it, or -1 when it did not end in time (it is then killed).
int wait_tool(pid_t pid, double seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The status of `pid` as wait_tool gives it once it has ended; -1 while it
// runs.
int poll_exit(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The pid a command wrote into `file`, waiting up to 10 s for it.
pid_t wait_for_pid(const std::string& file) {
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < until) {
    std::ifstream in(file);
    long pid = 0;
    if (in >> pid && pid > 0) return static_cast<pid_t>(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

// Whether `pid` is gone within 5 s.
bool gone(pid_t pid) {
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (::kill(pid, 0) == 0) {
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

class FaultCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = (fs::temp_directory_path() / "xal-fault-cli-XXXXXX").string();
    ASSERT_NE(::mkdtemp(base.data()), nullptr);
    dir_ = base;
    setup_.output = path("out.txt");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Runs xal-fault to its end (30 s at most).
  int run(const std::vector<std::string>& args) {
    return wait_tool(start_tool(args, setup_), 30);
  }

  fs::path dir_;
  ToolSetup setup_;
};

const std::string kRule = "mem_get_info=name(m)BACKEND";  // xal-info calls it

// Started with SIGCHLD ignored, xal-fault still sees how the command ended
// (it was reported as "exit 0").
TEST_F(FaultCli, ACrashIsReportedWhenStartedWithSigchldIgnored) {
  setup_.ignore_sigchld = true;
  EXPECT_EQ(run({"run", "--faults", kRule, "--", "sh", "-c", "kill -ABRT $$"}), 134)
      << read_file(setup_.output);
  EXPECT_NE(read_file(setup_.output).find("SIGABRT"), std::string::npos)
      << read_file(setup_.output);
}

// SIGTERM to xal-fault reaches the command's process group: nothing is
// left running, and xal-fault ends with 128 + SIGTERM.
TEST_F(FaultCli, AStopSignalEndsTheCommandToo) {
  setup_.tmpdir = dir_.string();
  for (const char* sub : {"run", "sweep"}) {
    SCOPED_TRACE(sub);
    const std::string pid_file = path(std::string(sub) + ".pid");
    std::vector<std::string> args = {sub, "--timeout", "0"};
    if (std::string(sub) == "run") {
      args.insert(args.end(), {"--faults", kRule});
    } else {
      args.insert(args.end(), {"--op", "mem_get_info"});
    }
    args.insert(args.end(), {"--", "sh", "-c", "echo $$ > '" + pid_file + "'; exec sleep 30"});
    const pid_t tool = start_tool(args, setup_);
    const pid_t sleeper = wait_for_pid(pid_file);
    ASSERT_GT(sleeper, 0) << read_file(setup_.output);
    ::kill(tool, SIGTERM);
    EXPECT_EQ(wait_tool(tool, 10), 128 + SIGTERM) << read_file(setup_.output);
    const bool ended = gone(sleeper);
    if (!ended) ::kill(sleeper, SIGKILL);
    EXPECT_TRUE(ended) << "the command " << sleeper << " still runs";
    EXPECT_NE(read_file(setup_.output).find("stopped by SIGTERM"), std::string::npos)
        << read_file(setup_.output);
  }
  // Its temporary logs are gone too.
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().rfind("xal-fault-", 0), std::string::npos)
        << entry.path();
  }
}

// With the terminal as stdin, the command can read it (it was stopped by
// SIGTTIN in its background process group, until the time limit).
TEST_F(FaultCli, TheCommandCanReadTheTerminal) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0) << std::strerror(errno);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const std::string slave = ::ptsname(master);
  std::vector<std::string> argv = {XAL_FAULT_EXE, "run", "--timeout", "10", "--faults", kRule,
                                   "--", "sh", "-c", "read line; echo \"got:$line\""};
  std::vector<char*> ptrs;
  for (auto& a : argv) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  const pid_t tool = ::fork();
  ASSERT_GE(tool, 0);
  if (tool == 0) {
    // A session of its own with the terminal as its controlling terminal:
    // xal-fault is its foreground, as when typed at a shell.
    ::setsid();
    const int fd = ::open(slave.c_str(), O_RDWR);
    if (fd < 0) ::_exit(126);
    ::dup2(fd, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::unsetenv("XAL_BACKENDS");
    ::execv(ptrs[0], ptrs.data());
    ::_exit(127);
  }
  ASSERT_EQ(::write(master, "hello\n", 6), 6);
  // Everything it writes, until it has ended and all is read (20 s at most).
  std::string output;
  const auto until = Clock::now() + std::chrono::seconds(20);
  ::fcntl(master, F_SETFL, O_NONBLOCK);
  int status = -1;
  for (;;) {
    char buf[512];
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n > 0) {
      output.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (status >= 0 || Clock::now() >= until) break;
    status = poll_exit(tool);
    if (status < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (status < 0) status = wait_tool(tool, 0);
  ::close(master);
  EXPECT_NE(output.find("got:hello"), std::string::npos) << output;
  EXPECT_NE(output.find("ended: exit 0"), std::string::npos) << output;
}

// A relative --log or TMPDIR still names the file xal-fault reads when the
// command changes its directory.
TEST_F(FaultCli, ARelativeLogSurvivesTheCommandsChdir) {
  fs::create_directory(dir_ / "sub");
  setup_.dir = dir_.string();
  const std::string command = std::string("cd sub && exec '") + XAL_INFO_EXE + "'";
  EXPECT_EQ(run({"run", "--log", "rel.log", "--faults", kRule, "--", "sh", "-c", command}), 0)
      << read_file(setup_.output);
  EXPECT_NE(read_file(setup_.output).find("injections: 1"), std::string::npos)
      << read_file(setup_.output);
  EXPECT_TRUE(fs::exists(dir_ / "rel.log"));
  EXPECT_FALSE(fs::exists(dir_ / "sub" / "rel.log"));

  setup_.tmpdir = ".";
  EXPECT_EQ(run({"run", "--faults", kRule, "--", "sh", "-c", command}), 0)
      << read_file(setup_.output);
  EXPECT_NE(read_file(setup_.output).find("injections: 1"), std::string::npos)
      << read_file(setup_.output);
  EXPECT_TRUE(fs::is_empty(dir_ / "sub"));
}

// An argument that is not UTF-8 is in the JSON report as U+FFFD (the
// report was lost to a JSON exception).
TEST_F(FaultCli, ANonUtf8ArgumentKeepsTheJsonReport) {
  setup_.stdout_path = path("report.json");
  const std::string command = std::string("exec '") + XAL_INFO_EXE + "'";
  EXPECT_EQ(run({"run", "--json", "--quiet", "--faults", kRule, "--", "sh", "-c", command,
                 "\xff"}),
            0)
      << read_file(setup_.output);
  const auto j = nlohmann::json::parse(read_file(setup_.stdout_path), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << read_file(setup_.stdout_path);
  EXPECT_EQ(j["command"].back(), "\xef\xbf\xbd");
  EXPECT_EQ(j["injections"], 1);
}

// A report that cannot be written fails the run.
TEST_F(FaultCli, AReportThatCannotBeWrittenFails) {
  setup_.stdout_path = "/dev/full";
  const std::string command = std::string("exec '") + XAL_INFO_EXE + "' >/dev/null";
  for (const char* flag : {"--json", "--quiet"}) {
    EXPECT_EQ(run({"run", flag, "--faults", kRule, "--", "sh", "-c", command}), 2) << flag;
    EXPECT_NE(read_file(setup_.output).find("cannot write the report to stdout"),
              std::string::npos)
        << read_file(setup_.output);
  }
}

}  // namespace
