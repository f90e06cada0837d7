// Helpers of the XAL_TRACE tests: temporary trace files, loading them, and
// picking API calls, stream tracks and track names out of a trace.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "test_util.hpp"

namespace xal_trace_test {

using nlohmann::json;

inline constexpr uint64_t kDevicePidBase = uint64_t{1} << 30;

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("xal_trace_" + std::to_string(::getpid()) + "_" + name + ".json"))
      .string();
}

inline json load(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.is_open()) << path;
  if (!in.is_open()) return json::object();
  return json::parse(in);  // throws (failing the test) on malformed JSON
}

inline uint64_t pid() { return static_cast<uint64_t>(::getpid()); }
inline uint64_t tid() { return static_cast<uint64_t>(::syscall(SYS_gettid)); }

// The API call events of this thread, in time order.
inline std::vector<json> api_events(const json& trace) {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == pid() && e["tid"] == tid()) out.push_back(e);
  std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return a["ts"].get<double>() < b["ts"].get<double>();
  });
  return out;
}

// Device operation events per (pid, tid) track, in time order.
inline std::map<std::pair<uint64_t, uint64_t>, std::vector<json>>
stream_tracks(const json& trace) {
  std::map<std::pair<uint64_t, uint64_t>, std::vector<json>> out;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"].get<uint64_t>() >= kDevicePidBase)
      out[{e["pid"], e["tid"]}].push_back(e);
  for (auto& [key, v] : out)
    std::stable_sort(v.begin(), v.end(), [](const json& a, const json& b) {
      return a["ts"].get<double>() < b["ts"].get<double>();
    });
  return out;
}

inline std::string metadata_name(const json& trace, const char* kind,
                                 uint64_t p, uint64_t t) {
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == kind && e["pid"] == p &&
        (std::string(kind) == "process_name" || e["tid"] == t))
      return e["args"]["name"];
  return "";
}

// Each test writes its own file, removed at the end.
class Trace : public ::testing::Test {
 protected:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  std::string path = temp_path(
      ::testing::UnitTest::GetInstance()->current_test_info()->name());
};

}  // namespace xal_trace_test
