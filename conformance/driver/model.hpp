// What xal-conform knows about a run: the platform, the tests and their
// outcomes, and the figures the tests attached.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace conform_driver {

struct BackendEntry {
  std::string name;
  std::string version;
  std::string path;
  std::string state;  // "loaded", "unavailable", "failed"
  std::string status; // xal_status_name of why it is not loaded
  std::string reason;
  uint32_t abi_version = 0;
  uint32_t device_count = 0;
  uint32_t flags = 0;
  bool simulated = false;
  std::string driver_version;
};

struct DeviceEntry {
  uint32_t index = 0;
  std::string name;
  std::string vendor;
  std::string backend;
  std::string uuid;
  uint64_t memory_bytes = 0;
  double peak_memory_bandwidth_gbps = 0;
  uint64_t capabilities = 0;
  bool simulated = false;
  bool selected = false;
};

struct Platform {
  uint32_t abi_version = 0;
  std::vector<BackendEntry> backends;
  std::vector<DeviceEntry> devices;
  std::string selector;  // XAL_DEVICE_SELECTOR, if set
};

// Outcomes as the report spells them.
inline constexpr const char* kPassed = "passed";
inline constexpr const char* kFailed = "failed";
inline constexpr const char* kUnsupported = "unsupported";
inline constexpr const char* kKnownFailure = "known-failure";
inline constexpr const char* kUnexpectedPass = "unexpected-pass";

struct TestResult {
  std::string name;  // "memory/Memory.AllocFree/d0_mock"
  std::string group; // "memory"
  std::vector<int> devices;
  std::string outcome;
  std::string message;
  double duration_ms = 0;
  std::string known_failure_reason;
};

struct Figure {
  std::string test;
  std::string name;
  std::optional<double> value;  // none when the suite gave no finite number
  std::string unit;
  int device = -1;
};

struct RunResult {
  std::vector<TestResult> tests;
  std::vector<Figure> figures;
  double duration_s = 0;
};

// The group of a test: the text before the first '/' or '.'.
std::string group_of(const std::string& test_name);

}  // namespace conform_driver
