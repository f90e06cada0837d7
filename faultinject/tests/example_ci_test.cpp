// CI of examples/fault_tolerant_training.c: run it under xal-fault sweeps
// and under random plans, and check from the exit code, its report and the
// fault log that every injected fault was handled. Also: the sweep finds a
// planted unhandled error path.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Result {
  int status = -1;  // exit code, or -1 if it did not exit
  std::string out;
};

Result run_shell(const std::string& command) {
  Result r;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// key=value pairs of the example's last report line.
std::map<std::string, std::string> report_of(const std::string& out) {
  std::map<std::string, std::string> kv;
  const auto pos = out.rfind("fault_tolerant_training: ");
  if (pos == std::string::npos) return kv;
  std::istringstream line(out.substr(pos + 25, out.find('\n', pos) - pos - 25));
  std::string item;
  while (line >> item) {
    const auto eq = item.find('=');
    if (eq != std::string::npos) kv[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return kv;
}

class ExampleCi : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"XAL_BACKENDS", "XAL_FAULT_PLAN", "XAL_FAULTS",
                          "XAL_FAULT_LOG", "XAL_FAULT_SEED",
                          "XAL_DEVICE_SELECTOR", "XAL_MEMORY_LIMIT",
                          "XAL_BACKEND_PATH"}) {
      ::unsetenv(v);
    }
    ::setenv("XAL_MOCK_DEVICES", "2*a100-40g", 1);
    ::setenv("XAL_COMM_TIMEOUT_MS", "200", 1);
  }

  nlohmann::json sweep(const std::string& op, const std::string& program) {
    const Result r = run_shell(std::string(XAL_FAULT_TOOL) + " sweep --json --op " +
                               op + " --timeout 60 -- " + program + " 2>/dev/null");
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.out;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    return j;
  }
};

void expect_all_handled(const nlohmann::json& j) {
  ASSERT_TRUE(j.contains("summary")) << j.dump();
  EXPECT_TRUE(j["complete"].get<bool>()) << j.dump(2);
  EXPECT_GE(j["summary"]["runs"].get<int>(), 2);
  EXPECT_EQ(j["summary"]["crashed"], 0) << j.dump(2);
  EXPECT_EQ(j["summary"]["hung"], 0) << j.dump(2);
  EXPECT_EQ(j["summary"]["exited_non_zero"], 0) << j.dump(2);
  int injected = 0;
  for (const auto& run : j["runs"]) {
    if (run["injected"].get<bool>()) ++injected;
    EXPECT_EQ(run["verdict"], "ok") << run.dump();
  }
  EXPECT_EQ(injected + 1, j["summary"]["runs"].get<int>());
}

TEST_F(ExampleCi, SweepAllocations) {
  expect_all_handled(sweep("mem_alloc", std::string(XAL_EXAMPLE_TRAINING) + " 3"));
}

TEST_F(ExampleCi, SweepHostToDeviceCopies) {
  expect_all_handled(sweep("memcpy_htod", std::string(XAL_EXAMPLE_TRAINING) + " 2"));
}

TEST_F(ExampleCi, SweepSynchronize) {
  expect_all_handled(
      sweep("stream_synchronize", std::string(XAL_EXAMPLE_TRAINING) + " 2"));
}

TEST_F(ExampleCi, RandomPlans) {
  const std::string log = ::testing::TempDir() + "/example_ci_" +
                          std::to_string(::getpid()) + ".log";
  for (int seed : {1, 2, 3}) {
    std::remove(log.c_str());
    const std::string plan =
        "seed=" + std::to_string(seed) +
        ";profile=cuda"
        ";mem_alloc=10%OUT_OF_MEMORY"
        ";memcpy_htod=3%cuda:CUDA_ERROR_ILLEGAL_ADDRESS"
        ";memcpy_dtoh=3%bitflip(2)"
        ";memcpy_htod=2%bitflip"
        ";stream_synchronize=2%TIMEOUT"
        ";*=device(1)2%2*device_lost"
        ";stream_synchronize=1%2*hang(50)"
        ";stream_create=10%delay(1)";
    const Result r = run_shell("XAL_BACKENDS=fault:mock XAL_FAULT_LOG=" + log +
                               " XAL_FAULTS='" + plan + "' " +
                               XAL_EXAMPLE_TRAINING + " 8 2>/dev/null");
    EXPECT_EQ(r.status, 0) << "seed " << seed << "\n" << r.out;
    const auto report = report_of(r.out);
    ASSERT_EQ(report.count("result"), 1u) << r.out;
    EXPECT_EQ(report.at("result"), "ok");
    // Every injection that is not a delay must have been seen and handled.
    int errors = 0, flips = 0, delays = 0;
    std::ifstream in(log);
    std::string line;
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line);
      const std::string action = j["action"];
      if (action == "delay") {
        ++delays;
      } else if (action == "bitflip") {
        ++flips;
      } else {
        ++errors;
      }
    }
    EXPECT_GT(errors + flips, 0) << "seed " << seed << ": nothing injected";
    // Each injected error reached the program (a sticky one more than once);
    // each corruption it detected was injected (a flip whose step failed
    // for another reason, or two flips of one bit, goes unseen), and
    // result=ok says that no corrupted value survived into the result.
    EXPECT_GE(std::stoi(report.at("errors")), errors) << r.out;
    EXPECT_LE(std::stoi(report.at("corruptions")), flips) << r.out;
  }
  std::remove(log.c_str());
}

TEST_F(ExampleCi, SameSeedSameRun) {
  const std::string plan =
      "seed=5;mem_alloc=20%OUT_OF_MEMORY;memcpy_dtoh=5%bitflip";
  auto run = [&] {
    return run_shell("XAL_BACKENDS=fault:mock XAL_FAULTS='" + plan + "' " +
                     XAL_EXAMPLE_TRAINING + " 4 2>/dev/null");
  };
  const Result a = run();
  const Result b = run();
  EXPECT_EQ(a.status, 0);
  EXPECT_EQ(a.out, b.out);
}

TEST_F(ExampleCi, SweepFindsAnUnhandledErrorPath) {
  const Result r = run_shell(std::string(XAL_FAULT_TOOL) +
                             " sweep --json --op mem_alloc --timeout 3 -- " +
                             XAL_UNHANDLED_APP + " 2>/dev/null");
  EXPECT_EQ(r.status, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_EQ(j["runs"].size(), 4u) << j.dump(2);
  EXPECT_EQ(j["runs"][0]["verdict"], "ok");
  EXPECT_EQ(j["runs"][1]["verdict"], "crashed");
  EXPECT_EQ(j["runs"][1]["outcome"]["signal"], 6);
  EXPECT_EQ(j["runs"][2]["verdict"], "hung");
  EXPECT_TRUE(j["runs"][2]["outcome"]["timed_out"].get<bool>());
  EXPECT_EQ(j["runs"][3]["verdict"], "ok");
  EXPECT_FALSE(j["runs"][3]["injected"].get<bool>());
  EXPECT_EQ(j["summary"]["crashed"], 1);
  EXPECT_EQ(j["summary"]["hung"], 1);
}

TEST_F(ExampleCi, RunReportsRulesAndEnding) {
  const std::string log = ::testing::TempDir() + "/example_ci_run_" +
                          std::to_string(::getpid()) + ".log";
  const Result r = run_shell(std::string(XAL_FAULT_TOOL) +
                             " run --json --quiet --log " + log +
                             " --faults 'mem_alloc=nth(2)name(second)OUT_OF_MEMORY' -- " +
                             XAL_UNHANDLED_APP);
  EXPECT_EQ(r.status, 134) << r.out;  // 128 + SIGABRT
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["outcome"]["signal"], 6);
  EXPECT_EQ(j["injections"], 1);
  EXPECT_EQ(j["rules"]["second"]["fired"], 1);
  EXPECT_EQ(j["rules"]["second"]["operations"]["mem_alloc"], 1);
  std::remove(log.c_str());
  // A bad plan is refused before anything runs.
  const Result bad = run_shell(std::string(XAL_FAULT_TOOL) +
                               " run --faults 'mem_alloc=7*' -- true 2>&1");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("no action given"), std::string::npos) << bad.out;
}

// A fault backend that did not start in the command tested nothing: run and
// sweep say why and exit 2 rather than report the command's own status.
TEST_F(ExampleCi, ToolReportsAFaultBackendThatDidNotStart) {
  const std::string tool = XAL_FAULT_TOOL;
  const std::string program = XAL_EXAMPLE_TRAINING;
  const std::string plan = ::testing::TempDir() + "/example_ci_target_plan.json";
  {
    std::ofstream out(plan);
    out << R"({"target": "nosuch", "rules": []})";
  }
  const struct {
    std::string args;
    const char* expect;
  } cases[] = {
      {"run --quiet --faults 'mem_alloc=nth(1000)OUT_OF_MEMORY' --target nosuch -- " + program,
       "target backend 'nosuch' could not be loaded"},
      {"run --quiet --plan " + plan + " -- " + program,
       "target backend 'nosuch' could not be loaded"},
      {"sweep --op mem_alloc --target nosuch -- " + program,
       "run 1: the fault backend did not start in the command: fault: target backend 'nosuch'"},
      {"run --faults 'mem_alloc=nth(1000)OUT_OF_MEMORY' -- true", "no fault log was written"},
      {"sweep --op mem_alloc -- true", "no fault log was written"},
  };
  for (const auto& c : cases) {
    const Result r = run_shell(tool + " " + c.args + " 2>&1");
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.args << "\n" << r.out;
  }
  std::remove(plan.c_str());
}

TEST_F(ExampleCi, ToolRefusesBadOptions) {
  const std::string tool = XAL_FAULT_TOOL;
  const struct {
    std::string args;
    const char* expect;
  } cases[] = {
      {"", "A subcommand is required"},
      {"run -- true", "give --plan and/or --faults"},
      {"run --plan /no/such/plan.json -- true", "cannot open the plan file"},
      {"run --faults 'mem_alloc=TIMEOUT' --timeout -1 -- true", "--timeout"},
      {"sweep --op nosuchop -- true", "unknown operation 'nosuchop'"},
      {"sweep --op mem_alloc --error NOPE -- true", "unknown error name 'NOPE'"},
      {"sweep --op mem_alloc --max-runs 0 -- true", "--max-runs"},
      {"run --faults 'mem_alloc=TIMEOUT' --seed -3 -- true", "--seed: must be a whole number"},
      {"run --faults 'mem_alloc=TIMEOUT' --seed 18446744073709551616 -- true",
       "--seed: must be at most 18446744073709551615"},
      {"run --faults 'mem_alloc=TIMEOUT' --timeout nan -- true", "--timeout: must be a number"},
      {"sweep --op mem_alloc --timeout inf -- true", "--timeout: must be a number"},
      {"sweep --op mem_alloc --max-runs -1 -- true", "--max-runs: must be at least 1"},
      {"run --faults 'mem_alloc=TIMEOUT' --log /no/such/dir/log -- true",
       "cannot write the log '/no/such/dir/log'"},
      {"frobnicate", ""},
  };
  for (const auto& c : cases) {
    const Result r = run_shell(tool + " " + c.args + " 2>&1");
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.args << "\n" << r.out;
  }
  // A command that cannot be started.
  const Result r = run_shell(tool + " run --faults 'mem_alloc=TIMEOUT' -- /no/such/program 2>&1");
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.out.find("cannot run '/no/such/program'"), std::string::npos) << r.out;
}

}  // namespace
