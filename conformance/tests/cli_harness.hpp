// Harness of xal-conform's own tests: runs the installed-layout binary
// (path from CMake) in a clean environment and reads what it wrote.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace conform_test {

namespace fs = std::filesystem;
using nlohmann::json;

struct Outcome {
  int rc = -1;
  std::string output;  // stdout and stderr
};

inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs xal-conform with `args` in a clean environment plus `env`.
inline Outcome conform(const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env) {
  std::string cmd = "env -u XAL_DEVICE_SELECTOR -u XAL_MOCK_DEVICES -u XAL_BACKENDS "
                    "-u XAL_SHIM_DEFECT -u XAL_MEMORY_LIMIT -u XAL_FAULT_PLAN -u XAL_FAULTS";
  for (const auto& [k, v] : env) cmd += " " + quote(k + "=" + v);
  cmd += " " + quote(XAL_CONFORM_EXE);
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " 2>&1";
  Outcome out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.output.append(buffer, n);
  const int status = ::pclose(pipe);
  out.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

class ConformCli : public testing::Test {
 protected:
  void SetUp() override {
    std::string base = (fs::temp_directory_path() / "xal-conform-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(base.data()), nullptr);
    dir_ = base;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static json read_json(const std::string& file) {
    std::ifstream in(file);
    EXPECT_TRUE(in.good()) << file << " was not written";
    return json::parse(in, nullptr, false);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  static const json* find_test(const json& report, const std::string& name) {
    for (const json& t : report["tests"]) {
      if (t["name"] == name) return &t;
    }
    return nullptr;
  }

  fs::path dir_;
};

inline const std::map<std::string, std::string> kMock = {{"XAL_BACKENDS", "mock"},
                                                  {"XAL_MOCK_DEVICES", "2*a100-40g"}};

inline std::map<std::string, std::string> shim(const std::string& defect,
                                               const std::string& devices = "2*a100-40g") {
  std::map<std::string, std::string> env = {{"XAL_BACKENDS", XAL_SHIM_PLUGIN},
                                            {"XAL_MOCK_DEVICES", devices}};
  if (!defect.empty()) env["XAL_SHIM_DEFECT"] = defect;
  return env;
}

}  // namespace conform_test
