// Runs xal-smi against the mock backend: the table, --json, --watch and bad
// options.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Result {
  int exit_code = -1;
  std::string output;
};

// Only the variables a test sets reach xal-smi.
const char* const kClearEnv =
    "env -u XAL_BACKENDS -u XAL_BACKEND_PATH -u XAL_DEVICE_SELECTOR "
    "-u XAL_VALIDATION -u XAL_MEMORY_LIMIT -u XAL_MOCK_DEVICES "
    "-u XAL_FAULT_PLAN -u XAL_FAULTS -u XAL_TRACE -u XAL_PARTITIONS "
    "-u XAL_QUOTA_LEDGER ";

struct PipeCloser {
  int* status;
  void operator()(FILE* f) const { *status = pclose(f); }
};

Result run_smi(const std::string& args, const std::string& env = "",
               bool merge_stderr = false) {
  const std::string cmd = std::string(kClearEnv) + "XAL_BACKENDS='" +
                          XAL_MOCK_PLUGIN + "' " + env + " timeout 60 '" +
                          XAL_SMI_EXE + "' " + args +
                          (merge_stderr ? " 2>&1" : " 2>/dev/null");
  Result result;
  int status = -1;
  {
    std::unique_ptr<FILE, PipeCloser> pipe(popen(cmd.c_str(), "r"),
                                           PipeCloser{&status});
    if (!pipe) {
      ADD_FAILURE() << "popen failed for " << cmd;
      return result;
    }
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0) {
      result.output.append(buf.data(), n);
    }
  }
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size())) {
    ++n;
  }
  return n;
}

nlohmann::json parse_json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON:\n" << text;
  return j;
}

TEST(XalSmi, TableShowsBothDefaultMockDevices) {
  const Result r = run_smi("");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ABI 1."), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Backends:  mock"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("loaded, 2 devices"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| Idx |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Memory used / total"), std::string::npos);
  // Both mock cards, marked simulated, with temperature and power filled.
  EXPECT_EQ(count_of(r.output, "(sim) |"), 2u) << r.output;
  EXPECT_NE(r.output.find(" W |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" C |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MHz"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("xal counters of this process"), std::string::npos);
  EXPECT_EQ(r.output.find("\x1b["), std::string::npos) << "ANSI on a pipe";
}

TEST(XalSmi, JsonHasEveryDeviceWithDecodedValidBits) {
  const Result r = run_smi("--json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = parse_json(r.output);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.at("abi_version").get<std::string>().rfind("1.", 0), 0u);
  ASSERT_EQ(j.at("backends").size(), 1u);
  EXPECT_EQ(j["backends"][0].at("state"), "loaded");
  ASSERT_EQ(j.at("devices").size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const nlohmann::json& d = j["devices"][i];
    EXPECT_EQ(d.at("index"), i);
    EXPECT_FALSE(d.at("name").get<std::string>().empty());
    EXPECT_EQ(d.at("backend"), "mock");
    EXPECT_EQ(d.at("uuid").get<std::string>().size(), 36u);
    EXPECT_TRUE(d.at("simulated").get<bool>());
    EXPECT_GT(d.at("memory_bytes").get<uint64_t>(), 0u);
    const nlohmann::json& m = d.at("metrics");
    ASSERT_TRUE(m.is_object()) << d.dump(2);
    EXPECT_GT(m.at("memory_total_bytes").get<uint64_t>(), 0u) << m.dump(2);
    EXPECT_EQ(m.at("memory_total_bytes"), d.at("memory_bytes"));
    EXPECT_TRUE(m.at("simulated").get<bool>());
    const auto names = m.at("valid_names").get<std::vector<std::string>>();
    const auto has = [&](const char* n) {
      return std::find(names.begin(), names.end(), n) != names.end();
    };
    EXPECT_TRUE(has("utilization"));
    EXPECT_TRUE(has("memory_total"));
    EXPECT_TRUE(has("simulated"));
    EXPECT_EQ(has("power"), !m.at("power_w").is_null());
    EXPECT_EQ(has("pcie_replays"), !m.at("pcie_replays").is_null());
    EXPECT_NE(m.at("valid").get<uint64_t>() & (1ull << 63), 0u);
    const double util = m.at("utilization_percent").get<double>();
    EXPECT_GE(util, 0.0);
    EXPECT_LE(util, 100.0);
    EXPECT_EQ(d.at("health").at("state"), "ok");
  }
}

// A reading that cannot be written (a full disk) fails the run (it exited
// 0), with --watch too. Its stderr comes through the pipe: the `#` comments
// out run_smi's own redirection.
TEST(XalSmi, StdoutThatCannotBeWrittenExitsOne) {
  for (const char* args : {"--json", "", "--watch 0.01 --count 3"}) {
    const Result r = run_smi(std::string(args) + " 2>&1 >/dev/full #");
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.output;
    EXPECT_NE(r.output.find("xal-smi: cannot write to stdout"), std::string::npos)
        << r.output;
  }
}

TEST(XalSmi, DeviceOptionSelectsAndRejectsUnknownIndex) {
  const Result one = run_smi("--json --device 1");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const nlohmann::json j = parse_json(one.output);
  ASSERT_EQ(j.at("devices").size(), 1u);
  EXPECT_EQ(j["devices"][0].at("index"), 1);

  // A repeated index is shown once, in the order first given.
  const Result repeated = run_smi("--json -d 1 -d 0 -d 1");
  ASSERT_EQ(repeated.exit_code, 0) << repeated.output;
  const nlohmann::json r = parse_json(repeated.output);
  ASSERT_EQ(r.at("devices").size(), 2u);
  EXPECT_EQ(r["devices"][0].at("index"), 1);
  EXPECT_EQ(r["devices"][1].at("index"), 0);

  const Result bad = run_smi("--device 7", "", true);
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("no device 7 (there are 2 devices)"),
            std::string::npos)
      << bad.output;
}

TEST(XalSmi, MemoryLimitIsShown) {
  const Result r = run_smi("--json", "XAL_MEMORY_LIMIT=1GiB");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = parse_json(r.output);
  ASSERT_EQ(j.at("devices").size(), 2u);
  EXPECT_EQ(j["devices"][0].at("memory_total_bytes"), 1ull << 30)
      << j["devices"][0].dump(2);
  const nlohmann::json& m = j["devices"][0].at("metrics");
  if (!m.at("memory_limit_bytes").is_null()) {
    EXPECT_EQ(m.at("memory_limit_bytes"), 1ull << 30);
    const Result t = run_smi("", "XAL_MEMORY_LIMIT=1GiB");
    EXPECT_NE(t.output.find("(limit 1.00 GiB)"), std::string::npos) << t.output;
  }
}

// With the job's ledger, the memory column shows the job's use: here only
// xal-smi's own limit entry, holding nothing.
TEST(XalSmi, JobMemoryIsShownWithTheQuotaLedger) {
  const std::string name = "xal-smi-test-" + std::to_string(getpid());
  const std::string env = "XAL_MEMORY_LIMIT=1GiB XAL_QUOTA_LEDGER=" + name;
  const Result r = run_smi("--json", env);
  const Result t = run_smi("", env);
  const Result off = run_smi("--json", "XAL_MEMORY_LIMIT=1GiB");
  std::remove(("/dev/shm/xal-ledger-" + std::to_string(getuid()) + "-" + name).c_str());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = parse_json(r.output);
  const nlohmann::json& m = j["devices"][0].at("metrics");
  EXPECT_EQ(m.at("job_memory_used_bytes"), 0u) << m.dump(2);
  EXPECT_EQ(m.at("job_processes"), 1u);
  EXPECT_NE(m.at("valid_names").dump().find("job_memory"), std::string::npos);
  EXPECT_NE(t.output.find("(job 0 B in 1 proc, limit 1.00 GiB)"), std::string::npos)
      << t.output;
  // The process table lists xal-smi's own entry on each card.
  const nlohmann::json& procs = j["devices"][0].at("processes");
  ASSERT_EQ(procs.size(), 1u) << procs.dump(2);
  EXPECT_TRUE(procs[0].at("self").get<bool>());
  EXPECT_GT(procs[0].at("pid").get<int>(), 0);
  EXPECT_EQ(procs[0].at("name"), "xal-smi");
  EXPECT_EQ(procs[0].at("memory_bytes"), 0u);
  EXPECT_EQ(procs[0].at("limit_bytes"), 1ull << 30);
  EXPECT_NE(t.output.find("Processes of the job on each card"), std::string::npos);
  EXPECT_EQ(count_of(t.output, "xal-smi (self)"), 2u) << t.output;
  // Without a ledger the job fields are null and the cell has the limit only.
  ASSERT_EQ(off.exit_code, 0) << off.output;
  const nlohmann::json plain = parse_json(off.output);
  EXPECT_TRUE(plain["devices"][0]["metrics"].at("job_processes").is_null());
  EXPECT_TRUE(plain["devices"][0].at("processes").is_null());
}

TEST(XalSmi, PartitionsShowTheirCardAndShare) {
  const char* env = "XAL_PARTITIONS='mock:1=2GiB@25%,2GiB@75%'";
  const Result t = run_smi("", env);
  ASSERT_EQ(t.exit_code, 0) << t.output;
  EXPECT_NE(t.output.find("[part of 1, 25%]"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find("[part of 1, 75%]"), std::string::npos) << t.output;
  const Result r = run_smi("--json", env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = parse_json(r.output);
  ASSERT_EQ(j.at("devices").size(), 4u);
  EXPECT_EQ(j["devices"][2].at("parent_index"), 1);
  EXPECT_EQ(j["devices"][2].at("compute_percent"), 25);
  EXPECT_EQ(j["devices"][2].at("memory_total_bytes"), 2ull << 30);
  EXPECT_EQ(j["devices"][1].at("compute_percent"), 100);
}

TEST(XalSmi, WatchRefreshesCountTimes) {
  const Result r = run_smi("--watch 0.05 --count 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "xal-smi   ABI"), 2u) << r.output;
  EXPECT_EQ(r.output.find("\x1b["), std::string::npos) << "ANSI on a pipe";

  const Result lines = run_smi("--json --watch 0.05 --count 3");
  ASSERT_EQ(lines.exit_code, 0) << lines.output;
  std::istringstream in(lines.output);
  std::string line;
  size_t docs = 0;
  while (std::getline(in, line)) {
    const nlohmann::json j = parse_json(line);
    EXPECT_EQ(j.at("devices").size(), 2u);
    ++docs;
  }
  EXPECT_EQ(docs, 3u);
}

TEST(XalSmi, BadOptionsAreRejectedWithAMessage) {
  const Result w = run_smi("--watch abc --count 1", "", true);
  EXPECT_EQ(w.exit_code, 2) << w.output;
  EXPECT_NE(w.output.find("not a number of seconds"), std::string::npos)
      << w.output;
  const Result c = run_smi("--count 2", "", true);
  EXPECT_EQ(c.exit_code, 2) << c.output;
  EXPECT_NE(c.output.find("--count needs --watch"), std::string::npos);
  const Result u = run_smi("--no-such-option", "", true);
  EXPECT_NE(u.exit_code, 0);
}

TEST(XalSmi, BadOptionsExit2WithAReadableMessage) {
  const struct {
    const char* args;
    const char* expect;
  } cases[] = {
      {"--no-such-option", "xal-smi: The following argument was not expected"},
      {"--count", "xal-smi: --count"},
      {"--watch 1 --count 0", "--count: must be at least 1, not 0"},
      {"--device -1", "xal-smi: --device: must be a whole number (0 or more), not '-1'"},
  };
  for (const auto& c : cases) {
    const Result r = run_smi(c.args, "", true);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find("Run with --help"), std::string::npos) << r.output;
  }
}

TEST(XalSmi, BackendThatDoesNotLoadExits2) {
  const Result r = run_smi("--backend nosuch", "", true);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("xal-smi: backend 'nosuch' is"), std::string::npos) << r.output;
}

// A device whose properties cannot be read is shown with its error; the
// others are shown as usual, and the exit status says a reading failed.
TEST(XalSmi, UnreadableDeviceDoesNotHideTheOthers) {
#ifndef XAL_WITH_FAULT_BACKEND
  GTEST_SKIP() << "the fault backend is not built";
#endif
  const std::string env =
      "XAL_BACKENDS=fault:mock XAL_FAULTS='device_get_properties=device(0)DEVICE_LOST'";
  const Result j = run_smi("--json", env);
  EXPECT_EQ(j.exit_code, 1) << j.output;
  const nlohmann::json doc = parse_json(j.output);
  ASSERT_EQ(doc.at("devices").size(), 2u) << j.output;
  const nlohmann::json& lost = doc["devices"][0];
  EXPECT_TRUE(lost.at("name").is_null());
  EXPECT_NE(lost.at("properties_error").get<std::string>().find(
                "xal_device_get_properties failed: XAL_ERROR_DEVICE_LOST"),
            std::string::npos)
      << lost.dump(2);
  EXPECT_NE(doc["devices"][1].at("name").get<std::string>().find("A100"), std::string::npos);
  EXPECT_EQ(doc["devices"][1].at("health").at("state"), "ok");

  const Result t = run_smi("", env, true);
  EXPECT_EQ(t.exit_code, 1) << t.output;
  EXPECT_NE(t.output.find("(cannot be read)"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find("device 0: cannot be read: xal_device_get_properties failed"),
            std::string::npos)
      << t.output;
  // In the device table: the jobs table below it lists the ledgers of
  // whatever else of this user runs now (other tests among them).
  EXPECT_EQ(count_of(t.output.substr(0, t.output.find("\nJobs (")), "Mock NVIDIA A100"), 1u)
      << t.output;
}

// A process of a job (XAL_QUOTA_LEDGER, a 40% partition) copies; xal-smi,
// a process of its own without the ledger, shows the job and the process
// from the job's shared ledger.
TEST(XalSmi, ShowsEachJobAndItsProcessesFromTheLedgers) {
  const std::string job = "xal-smi-test-" + std::to_string(getpid());
  const pid_t worker = fork();
  ASSERT_GE(worker, 0);
  if (worker == 0) {
    for (const char* v : {"XAL_MOCK_DEVICES", "XAL_MEMORY_LIMIT", "XAL_DEVICE_SELECTOR",
                          "XAL_FAULT_PLAN", "XAL_FAULTS"})
      unsetenv(v);
    setenv("XAL_BACKENDS", XAL_MOCK_PLUGIN, 1);
    setenv("XAL_PARTITIONS", "mock:0=1GiB@40%,1GiB@60%", 1);
    setenv("XAL_QUOTA_LEDGER", job.c_str(), 1);
    if (!freopen("/dev/null", "w", stdout)) _exit(126);
    // Device 2: the two default mock cards, then card 0's partitions.
    execl(XAL_JOB_WORKER_EXE, XAL_JOB_WORKER_EXE, "2", "8", static_cast<char*>(nullptr));
    _exit(127);
  }
  usleep(1800 * 1000);  // published every 100 ms; utilization windows of 1 s
  const Result r = run_smi("--json");
  const Result t = run_smi("");
  kill(worker, SIGKILL);
  waitpid(worker, nullptr, 0);
  unlink(("/dev/shm/xal-ledger-" + std::to_string(getuid()) + "-" + job).c_str());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json doc = parse_json(r.output);
  const nlohmann::json* mine = nullptr;
  for (const auto& j : doc.at("jobs"))
    if (j.at("name") == job) mine = &j;
  ASSERT_NE(mine, nullptr) << doc.at("jobs").dump(2);
  EXPECT_TRUE(mine->at("error").is_null());
  ASSERT_EQ(mine->at("devices").size(), 1u) << mine->dump(2);  // idle ones left out
  const auto& dev = mine->at("devices")[0];
  EXPECT_EQ(dev.at("compute_percent"), 40);
  EXPECT_EQ(dev.at("process_count"), 1);
  EXPECT_NE(dev.at("name").get<std::string>().find("[part 1/2]"), std::string::npos);
  EXPECT_GT(dev.at("utilization_percent").get<double>(), 0.0);
  ASSERT_EQ(dev.at("processes").size(), 1u);
  EXPECT_EQ(dev["processes"][0].at("pid"), worker);
  EXPECT_EQ(dev["processes"][0].at("memory_bytes"), 1048576);
  EXPECT_GT(dev["processes"][0].at("bytes_copied").get<uint64_t>(), 0u);
  // The table has a Jobs section with the job and the process.
  EXPECT_NE(t.output.find("Jobs (shared ledgers"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find(job), std::string::npos) << t.output;
  EXPECT_NE(t.output.find(std::to_string(worker)), std::string::npos) << t.output;
}

TEST(XalSmi, MissingBackendIsReportedNotFatal) {
  const Result r = run_smi("--json", "XAL_BACKENDS=/nonexistent/libxal_backend_x.so");
  // xal never fails because a backend is absent: it lists it with a reason.
  if (r.exit_code == 0) {
    const nlohmann::json j = parse_json(r.output);
    ASSERT_GE(j.at("backends").size(), 1u);
    EXPECT_NE(j["backends"][0].at("state"), "loaded");
    EXPECT_FALSE(j["backends"][0].at("reason").get<std::string>().empty());
    EXPECT_EQ(j.at("devices").size(), 0u);
  } else {
    EXPECT_EQ(r.exit_code, 1);
  }
}

}  // namespace
