// Runs the xal-info program against the mock backend and checks its output,
// plain and --json.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace {

struct Result {
  int exit_code = -1;
  std::string output;
};

// A clean environment: only the variables a test sets reach xal-info.
const char* const kClearEnv =
    "env -u XAL_BACKENDS -u XAL_BACKEND_PATH -u XAL_DEVICE_SELECTOR "
    "-u XAL_VALIDATION -u XAL_MEMORY_LIMIT -u XAL_MOCK_DEVICES "
    "-u XAL_FAULT_PLAN -u XAL_FAULTS -u XAL_TRACE -u XAL_PARTITIONS ";

struct PipeCloser {
  int* status;
  void operator()(FILE* f) const { *status = pclose(f); }
};

// Runs `xal-info args` with `env` ("NAME=value ...") and the mock plugin as
// XAL_BACKENDS unless `env` overrides it. stderr is merged when asked.
Result run_info(const std::string& args, const std::string& env = "",
                bool merge_stderr = false) {
  std::string cmd = std::string(kClearEnv) + "XAL_BACKENDS='" +
                    XAL_MOCK_PLUGIN + "' " + env + " '" + XAL_INFO_EXE +
                    "' " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
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
  if (status != -1 && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

nlohmann::json run_json(const std::string& env = "") {
  Result r = run_info("--json", env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON:\n" << r.output;
  return j;
}

TEST(XalInfo, PlainListsMockBackendAndTwoDefaultDevices) {
  Result r = run_info("");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Backends: 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mock"), std::string::npos);
  EXPECT_NE(r.output.find("LOADED"), std::string::npos);
  EXPECT_NE(r.output.find("Devices: 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("capabilities"), std::string::npos);
  EXPECT_NE(r.output.find("simulated"), std::string::npos);
  // The backend's own note.
  EXPECT_NE(r.output.find("simulated devices from profiles"), std::string::npos) << r.output;
}

TEST(XalInfo, JsonDescribesBackendsAndDevices) {
  nlohmann::json j = run_json();
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.at("abi_version").get<std::string>().substr(0, 2), "1.");

  ASSERT_EQ(j.at("backends").size(), 1u);
  const auto& b = j["backends"][0];
  EXPECT_EQ(b.at("name"), "mock");
  EXPECT_EQ(b.at("state"), "LOADED");
  EXPECT_EQ(b.at("status"), "XAL_SUCCESS");
  EXPECT_NE(b.at("path").get<std::string>().find("libxal_backend_mock.so"),
            std::string::npos);
  EXPECT_EQ(b.at("device_count"), 2);
  EXPECT_TRUE(b.at("simulated").get<bool>());
  EXPECT_NE(b.at("note").get<std::string>().find("simulated devices from profiles"),
            std::string::npos);

  const auto& devices = j.at("devices");
  ASSERT_EQ(devices.size(), 2u);
  std::set<std::string> uuids;
  for (size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    EXPECT_EQ(d.at("index"), i);
    EXPECT_EQ(d.at("backend"), "mock");
    EXPECT_EQ(d.at("backend_index"), i);
    EXPECT_FALSE(d.at("name").get<std::string>().empty());
    EXPECT_FALSE(d.at("vendor").get<std::string>().empty());
    EXPECT_GT(d.at("memory_bytes").get<uint64_t>(), 0u);
    EXPECT_GT(d.at("compute_units").get<uint32_t>(), 0u);
    EXPECT_GT(d.at("peak_memory_bandwidth_gbps").get<double>(), 0.0);
    EXPECT_TRUE(d.at("parent_index").is_null());
    const auto caps = d.at("capabilities").get<std::set<std::string>>();
    EXPECT_TRUE(caps.count("simulated")) << d.dump();
    ASSERT_TRUE(d.at("memory_total_bytes").is_number()) << d.dump();
    EXPECT_GT(d["memory_total_bytes"].get<uint64_t>(), 0u);
    EXPECT_LE(d["memory_free_bytes"].get<uint64_t>(),
              d["memory_total_bytes"].get<uint64_t>());
    const auto uuid = d.at("uuid").get<std::string>();
    EXPECT_EQ(uuid.size(), 36u);
    uuids.insert(uuid);
  }
  EXPECT_EQ(uuids.size(), 2u) << "device UUIDs must differ";
}

TEST(XalInfo, MemoryLimitIsReportedAsTotal) {
  nlohmann::json j = run_json("XAL_MEMORY_LIMIT=1GiB");
  ASSERT_EQ(j.at("devices").size(), 2u);
  for (const auto& d : j["devices"]) {
    EXPECT_EQ(d.at("memory_total_bytes").get<uint64_t>(), 1ull << 30)
        << d.dump();
  }
}

TEST(XalInfo, MockProfilesFromEnvironment) {
  nlohmann::json j = run_json("XAL_MOCK_DEVICES='1*mi300x,2*a100-40g'");
  const auto& devices = j.at("devices");
  ASSERT_EQ(devices.size(), 3u) << j.dump(2);
  EXPECT_NE(devices[0].at("name").get<std::string>().find("MI300X"),
            std::string::npos);
  EXPECT_EQ(devices[0].at("vendor"), "AMD");
  EXPECT_EQ(devices[0].at("memory_bytes").get<uint64_t>(), 192ull << 30);
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_NE(devices[i].at("name").get<std::string>().find("A100"),
              std::string::npos);
    EXPECT_EQ(devices[i].at("vendor"), "NVIDIA");
    EXPECT_EQ(devices[i].at("memory_bytes").get<uint64_t>(), 40ull << 30);
  }
}

TEST(XalInfo, MalformedMockDevicesIsListedAsNotLoaded) {
  nlohmann::json j = run_json("XAL_MOCK_DEVICES='2*no-such-card'");
  ASSERT_EQ(j.at("backends").size(), 1u);
  const auto& b = j["backends"][0];
  EXPECT_NE(b.at("state"), "LOADED");
  EXPECT_NE(b.at("reason").get<std::string>().find("XAL_MOCK_DEVICES"),
            std::string::npos)
      << b.dump();
  EXPECT_EQ(j.at("devices").size(), 0u);
}

TEST(XalInfo, InitFailureExitsOneWithTheReason) {
  Result r = run_info("--json", "XAL_MEMORY_LIMIT=lots", true);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("xal_init failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("XAL_ERROR_INVALID_ARGUMENT"), std::string::npos);
  EXPECT_NE(r.output.find("XAL_MEMORY_LIMIT"), std::string::npos);
}

TEST(XalInfo, SelectorNarrowsDevices) {
  Result r = run_info("--json --selector 'mock:1'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j.at("devices").size(), 1u);
  EXPECT_EQ(j["devices"][0].at("backend"), "mock");
}

TEST(XalInfo, MissingBackendIsListedWithReasonAndExitsTwo) {
  Result r = run_info("--json --backend /nonexistent/libxal_backend_nope.so");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  ASSERT_EQ(j.at("backends").size(), 1u);
  EXPECT_NE(j["backends"][0].at("state"), "LOADED");
  EXPECT_FALSE(j["backends"][0].at("reason").get<std::string>().empty());
  EXPECT_EQ(j.at("devices").size(), 0u);

  Result text =
      run_info("--backend /nonexistent/libxal_backend_nope.so", "", true);
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.output.find("xal-info: backend"), std::string::npos)
      << text.output;
}

TEST(XalInfo, BadOptionFailsCleanly) {
  Result r = run_info("--no-such-option", "", true);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("xal-info: The following argument was not expected: "
                          "--no-such-option"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Run with --help"), std::string::npos) << r.output;
}

// A listing that cannot be written (a full disk) fails the run (it exited
// 0). Its stderr comes through the pipe: the `#` comments out run_info's
// own redirection.
TEST(XalInfo, StdoutThatCannotBeWrittenExitsOne) {
  for (const char* args : {"--json", ""}) {
    const Result r = run_info(std::string(args) + " 2>&1 >/dev/full #");
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.output;
    EXPECT_NE(r.output.find("xal-info: cannot write to stdout"), std::string::npos)
        << r.output;
  }
}

// A device whose properties cannot be read is listed with its error, the
// others as usual; the exit status says a reading failed.
TEST(XalInfo, UnreadableDeviceDoesNotHideTheOthers) {
#ifndef XAL_WITH_FAULT_BACKEND
  GTEST_SKIP() << "the fault backend is not built";
#endif
  const std::string env =
      "XAL_BACKENDS=fault:mock XAL_FAULTS='device_get_properties=device(0)DEVICE_LOST'";
  const Result t = run_info("", env, true);
  EXPECT_EQ(t.exit_code, 1) << t.output;
  EXPECT_NE(t.output.find("[0] cannot be read"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find("[1] Mock NVIDIA A100"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find("xal-info: device 0 cannot be read: xal_device_get_properties "
                          "failed: XAL_ERROR_DEVICE_LOST"),
            std::string::npos)
      << t.output;
  const Result j = run_info("--json", env);
  EXPECT_EQ(j.exit_code, 1) << j.output;
  const nlohmann::json doc = nlohmann::json::parse(j.output, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.output;
  ASSERT_EQ(doc.at("devices").size(), 2u) << j.output;
  EXPECT_EQ(doc["devices"][0].at("index"), 0);
  EXPECT_NE(doc["devices"][0].at("error").get<std::string>().find("DEVICE_LOST"),
            std::string::npos);
  EXPECT_EQ(doc["devices"][1].at("index"), 1);
  EXPECT_FALSE(doc["devices"][1].at("name").get<std::string>().empty());
}

}  // namespace

namespace {

TEST(XalInfo, PartitionsShowTheirParentAndShare) {
  nlohmann::json j = run_json("XAL_PARTITIONS='mock:0=4GiB@30%,4GiB@70%'");
  const auto& devs = j.at("devices");
  ASSERT_EQ(devs.size(), 4u);
  EXPECT_TRUE(devs[0].at("parent_index").is_null());
  EXPECT_EQ(devs[0].at("compute_percent"), 100);
  EXPECT_EQ(devs[2].at("parent_index"), 0);
  EXPECT_EQ(devs[2].at("compute_percent"), 30);
  EXPECT_EQ(devs[3].at("compute_percent"), 70);
  EXPECT_EQ(devs[2].at("memory_bytes"), 4ull << 30);
  EXPECT_EQ(devs[2].at("memory_total_bytes"), 4ull << 30);
  EXPECT_NE(devs[2].at("name").get<std::string>().find("[part 1/2]"),
            std::string::npos);
  EXPECT_TRUE(j.at("partition_errors").empty());

  Result r = run_info("", "XAL_PARTITIONS='mock:1=2x1GiB'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("compute share         50%"), std::string::npos)
      << r.output;
}

TEST(XalInfo, BadPartitionSpecIsShownAndTheRestWorks) {
  nlohmann::json j =
      run_json("XAL_PARTITIONS='mock:0=2x30GiB;mock:1=1GiB@80%,1GiB@30%;x'");
  EXPECT_EQ(j.at("devices").size(), 2u);
  const auto& errs = j.at("partition_errors");
  ASSERT_EQ(errs.size(), 3u);
  std::string all;
  for (const auto& e : errs) all += e.get<std::string>() + "\n";
  EXPECT_NE(all.find("more than the card's 40.00 GiB"), std::string::npos) << all;
  EXPECT_NE(all.find("shares add up to 110%"), std::string::npos) << all;
  EXPECT_NE(all.find("entry 'x' ignored"), std::string::npos) << all;
  Result r = run_info("", "XAL_PARTITIONS='x'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("Partition problems (XAL_PARTITIONS): 1"),
            std::string::npos) << r.output;
}

}  // namespace

// For scripts: the device count alone, a JSON number.
TEST(XalInfo, DeviceCountIsAJsonNumber) {
  Result r = run_info("--device-count");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output), 2);
  r = run_info("--device-count --selector 'mock:1'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output), 1);
}

// --device-count-to: the JSON as usual on stdout, the count in the file.
TEST(XalInfo, DeviceCountToWritesTheCountBesideTheJson) {
  const std::string file = ::testing::TempDir() + "/xal_info_count_" + std::to_string(::getpid());
  Result r = run_info("--json --device-count-to '" + file + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output).at("devices").size(), 2u);
  std::ifstream in(file);
  int count = -1;
  EXPECT_TRUE(in >> count);
  EXPECT_EQ(count, 2);
  std::remove(file.c_str());
}

// --locate: the dynamic loader's file for a soname, its path alone; a
// library that is nowhere exits 1 and says so.
TEST(XalInfo, LocateFindsALibraryOrExitsOne) {
  Result r = run_info("--locate libc.so.6");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_FALSE(r.output.empty());
  EXPECT_EQ(r.output.front(), '/');
  EXPECT_EQ(r.output.back(), '\n');
  EXPECT_NE(r.output.find("libc.so.6"), std::string::npos) << r.output;
  r = run_info("--locate libxal-no-such-library.so.9", "", true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("libxal-no-such-library.so.9 not found"), std::string::npos) << r.output;
}
