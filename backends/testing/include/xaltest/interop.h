// What the vendor backends' interop tests (ABI 1.1: imported memory and
// streams, IPC handles) share, through libxal's public ABI: the thread's
// last xal error, status checks that also want a message, a second process
// (the mock's xal_ipc_peer, which uses only xal.h) with pipes to pass an
// IPC handle as hex text, and the IPC cases themselves (TESTS ONLY).
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "xal/xal.h"
#include "xal/xal_backend.h"

extern char** environ;

namespace xaltest {

inline xal_error_info_t xal_error() {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  return e;
}

#define XALTEST_ASSERT_OK(call) ASSERT_EQ((call), XAL_SUCCESS) << ::xaltest::xal_error().message
#define XALTEST_EXPECT_OK(call) EXPECT_EQ((call), XAL_SUCCESS) << ::xaltest::xal_error().message
// The status, and a message that says why.
#define XALTEST_EXPECT_STATUS(call, status)                              \
  do {                                                                   \
    EXPECT_EQ((call), (status)) << ::xaltest::xal_error().message;       \
    EXPECT_GT(std::strlen(::xaltest::xal_error().message), 0u);          \
  } while (0)

// A child process with pipes to its stdin and stdout, in the environment
// of this one.
struct Child {
  pid_t pid = -1;
  FILE* in = nullptr;   // the child's stdin
  FILE* out = nullptr;  // the child's stdout

  static Child spawn(std::vector<std::string> args) {
    int to[2], from[2];
    Child c;
    if (pipe(to) != 0) return c;
    if (pipe(from) != 0) {
      close(to[0]);
      close(to[1]);
      return c;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from[1], 1);
    posix_spawn_file_actions_addclose(&fa, to[1]);
    posix_spawn_file_actions_addclose(&fa, from[0]);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&c.pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) c.pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(to[0]);
    close(from[1]);
    c.in = fdopen(to[1], "w");
    c.out = fdopen(from[0], "r");
    return c;
  }
  // One line of the child's output, without its newline ("" at the end).
  std::string line() {
    char buf[512] = "";
    if (!fgets(buf, sizeof buf, out)) return "";
    std::string s(buf);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  void send(const std::string& text) {
    std::fprintf(in, "%s\n", text.c_str());
    std::fflush(in);
  }
  // Closes the pipes and returns the exit code (-1: killed or not started).
  int finish() {
    if (in) fclose(in);
    if (out) fclose(out);
    in = out = nullptr;
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
      return WEXITSTATUS(status);
    return -1;
  }
};

inline std::string to_hex(const xal_ipc_handle_t& h) {
  std::string s;
  char b[3];
  for (uint8_t v : h.bytes) {
    std::snprintf(b, sizeof b, "%02x", v);
    s += b;
  }
  return s;
}

inline xal_ipc_handle_t parse_handle(const std::string& hex) {
  xal_ipc_handle_t h{};
  for (size_t i = 0; i < sizeof h.bytes && 2 * i + 1 < hex.size(); ++i)
    h.bytes[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return h;
}

// Where the backend's part of an xal_ipc_handle_t starts: after the core's
// header (core/src/api_interop.cpp), XAL_IPC_VENDOR_BYTES before the end.
inline constexpr size_t kIpcVendorOffset = XAL_IPC_HANDLE_SIZE - XAL_IPC_VENDOR_BYTES;

// The IPC cases every backend with IPC handles runs, with `peer` (the
// mock's xal_ipc_peer) started in the same environment. Device 0 of the
// child is device 0 here.

// xal_mem_alloc'd memory of `dev0`, exported: the child opens it, checks
// what this process wrote and writes its own pattern, seen here. Then the
// bad requests of this side.
inline void ipc_export_to_a_child(xal_device_t dev0, xal_stream_t s0, const char* peer) {
  const size_t n = 3 * 4096 + 100;
  std::vector<uint8_t> pattern(n);
  for (size_t i = 0; i < n; ++i) pattern[i] = static_cast<uint8_t>((i * 7 + 1) & 0xff);
  xal_devptr_t q = 0;
  XALTEST_ASSERT_OK(xal_mem_alloc(dev0, n, &q));
  XALTEST_ASSERT_OK(xal_memcpy_htod(s0, q, pattern.data(), n));
  XALTEST_ASSERT_OK(xal_stream_synchronize(s0));
  xal_ipc_handle_t h{};
  XALTEST_ASSERT_OK(xal_mem_get_ipc_handle(dev0, q, &h));
  Child c = Child::spawn({peer, "import"});
  ASSERT_GT(c.pid, 0);
  c.send(to_hex(h));
  EXPECT_EQ(c.line(), "ok " + std::to_string(n));
  EXPECT_EQ(c.finish(), 0);
  std::vector<uint8_t> back(n);
  XALTEST_ASSERT_OK(xal_memcpy_dtoh(s0, back.data(), q, n));
  XALTEST_ASSERT_OK(xal_stream_synchronize(s0));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], static_cast<uint8_t>((i * 3) & 0xff)) << i;
  // This process cannot open its own handle; bad requests are refused.
  xal_devptr_t r = 0;
  XALTEST_EXPECT_STATUS(xal_mem_open_ipc_handle(dev0, &h, 0, &r, nullptr),
                        XAL_ERROR_INVALID_ARGUMENT);
  XALTEST_EXPECT_STATUS(xal_mem_open_ipc_handle(dev0, &h, 1, &r, nullptr),
                        XAL_ERROR_INVALID_ARGUMENT);
  XALTEST_EXPECT_STATUS(xal_mem_open_ipc_handle(dev0, nullptr, 0, &r, nullptr),
                        XAL_ERROR_INVALID_ARGUMENT);
  XALTEST_EXPECT_STATUS(xal_mem_get_ipc_handle(dev0, q + 256, &h), XAL_ERROR_INVALID_ARGUMENT);
  XALTEST_EXPECT_STATUS(xal_mem_get_ipc_handle(dev0, q, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  XALTEST_EXPECT_STATUS(xal_mem_close_ipc_handle(dev0, q), XAL_ERROR_INVALID_ARGUMENT);
  XALTEST_ASSERT_OK(xal_mem_free(dev0, q));
  XALTEST_EXPECT_STATUS(xal_mem_get_ipc_handle(dev0, q, &h), XAL_ERROR_INVALID_ARGUMENT);
}

// A child's memory, opened on `dev1`: read, bounded, written back for the
// child to check; a handle whose vendor part is damaged is refused with
// `damaged_code` (the driver's); once the child ended, copies say so.
inline void ipc_open_from_a_child(xal_device_t dev0, xal_device_t dev1, const char* peer,
                                  int64_t damaged_code) {
  Child c = Child::spawn({peer, "export", "8192"});
  ASSERT_GT(c.pid, 0);
  const xal_ipc_handle_t h = parse_handle(c.line());
  xal_devptr_t p = 0;
  size_t bytes = 0;
  XALTEST_ASSERT_OK(xal_mem_open_ipc_handle(dev1, &h, 0, &p, &bytes));
  EXPECT_EQ(bytes, 8192u);
  xal_stream_t s1 = nullptr;
  XALTEST_ASSERT_OK(xal_stream_create(dev1, 0, &s1));
  std::vector<uint8_t> back(bytes);
  XALTEST_ASSERT_OK(xal_memcpy_dtoh(s1, back.data(), p, bytes));
  XALTEST_ASSERT_OK(xal_stream_synchronize(s1));
  for (size_t i = 0; i < bytes; ++i)
    ASSERT_EQ(back[i], static_cast<uint8_t>((i * 7 + 1) & 0xff)) << i;
  // Bounds are the exporter's size; it cannot be freed, only closed.
  XALTEST_EXPECT_STATUS(xal_memcpy_dtoh(s1, back.data(), p + 1, bytes), XAL_ERROR_OUT_OF_BOUNDS);
  XALTEST_EXPECT_STATUS(xal_mem_free(dev1, p), XAL_ERROR_INVALID_ARGUMENT);
  // The driver refuses a handle whose vendor part is damaged.
  xal_ipc_handle_t bad = h;
  bad.bytes[kIpcVendorOffset] ^= 0xff;
  xal_devptr_t r = 0;
  XALTEST_EXPECT_STATUS(xal_mem_open_ipc_handle(dev0, &bad, 0, &r, nullptr),
                        XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(xal_error().vendor_code, damaged_code);
  // Written here, checked by the exporter, which then ends.
  for (size_t i = 0; i < bytes; ++i) back[i] = static_cast<uint8_t>((i * 3) & 0xff);
  XALTEST_ASSERT_OK(xal_memcpy_htod(s1, p, back.data(), bytes));
  XALTEST_ASSERT_OK(xal_stream_synchronize(s1));
  c.send("done");
  EXPECT_EQ(c.finish(), 0);
  XALTEST_EXPECT_STATUS(xal_memcpy_dtoh(s1, back.data(), p, bytes), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("has ended"), std::string::npos)
      << xal_error().message;
  XALTEST_EXPECT_STATUS(xal_memset(s1, p, 0, 16), XAL_ERROR_INVALID_ARGUMENT);
  XALTEST_ASSERT_OK(xal_mem_close_ipc_handle(dev1, p));
  XALTEST_EXPECT_STATUS(xal_mem_close_ipc_handle(dev1, p), XAL_ERROR_INVALID_ARGUMENT);
  XALTEST_ASSERT_OK(xal_stream_destroy(s1));
}

// A child killed while its memory is open here: the next use fails with a
// clear status, a second open too. Left open for shutdown to close.
inline void ipc_exporter_killed(xal_device_t dev0, xal_stream_t s0, const char* peer) {
  Child c = Child::spawn({peer, "export", "4096"});
  ASSERT_GT(c.pid, 0);
  const xal_ipc_handle_t h = parse_handle(c.line());
  xal_devptr_t p = 0;
  XALTEST_ASSERT_OK(xal_mem_open_ipc_handle(dev0, &h, 0, &p, nullptr));
  kill(c.pid, SIGKILL);
  c.finish();
  std::vector<uint8_t> back(16);
  XALTEST_EXPECT_STATUS(xal_memcpy_dtoh(s0, back.data(), p, 16), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("has ended"), std::string::npos)
      << xal_error().message;
  xal_devptr_t r = 0;
  XALTEST_EXPECT_STATUS(xal_mem_open_ipc_handle(dev0, &h, 0, &r, nullptr),
                        XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("has ended"), std::string::npos)
      << xal_error().message;
}

}  // namespace xaltest
