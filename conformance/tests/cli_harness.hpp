// Harness of xal-conform's own tests: runs the installed-layout binary
// (path from CMake) in a clean environment and reads what it wrote.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
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

// Starts xal-conform with `args` in the environment conform() gives it,
// without waiting; stdout and stderr go to the file `output`. With
// `ignore_sigchld` it starts with SIGCHLD ignored, as a careless parent may
// leave it.
inline pid_t start_conform(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env,
                           const std::string& output, bool ignore_sigchld = false) {
  std::vector<std::string> argv = {XAL_CONFORM_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> ptrs;
  for (auto& a : argv) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  for (const char* v : {"XAL_DEVICE_SELECTOR", "XAL_MOCK_DEVICES", "XAL_BACKENDS",
                        "XAL_SHIM_DEFECT", "XAL_MEMORY_LIMIT", "XAL_FAULT_PLAN", "XAL_FAULTS"}) {
    ::unsetenv(v);
  }
  for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
  if (ignore_sigchld) ::signal(SIGCHLD, SIG_IGN);
  const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) ::_exit(126);
  ::dup2(fd, STDOUT_FILENO);
  ::dup2(fd, STDERR_FILENO);
  ::execv(ptrs[0], ptrs.data());
  ::_exit(127);
}

// Waits up to `seconds` for `pid`: its exit code, 128 + the signal that
// killed it, or -1 when it did not end in time (it is then killed).
inline int wait_exit(pid_t pid, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline std::string read_text(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Where `text` stops being text that XML 1.0 allows, as UTF-8 (a byte that
// is not part of a character, a control character other than tab, newline
// and carriage return, U+FFFE, U+FFFF); npos when nowhere.
inline size_t xml_text_problem(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return i;
      ++i;
      continue;
    }
    const size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (n == 0 || c > 0xF4 || i + n > text.size()) return i;
    uint32_t code = c & (0x7Fu >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0) != 0x80) return i;
      code = (code << 6) | (b & 0x3Fu);
    }
    const uint32_t least = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    if (code < least || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF) ||
        code == 0xFFFE || code == 0xFFFF) {
      return i;
    }
    i += n;
  }
  return std::string::npos;
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
