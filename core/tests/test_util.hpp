// Helpers shared by the core's unit tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "xal/xal.h"

namespace xal_test {

// Absolute path of a test plugin built in core/tests/plugins.
inline std::string plugin(const char* name) {
  return std::string(XAL_TEST_PLUGIN_DIR) + "/libxal_backend_" + name + ".so";
}

inline xal_error_info_t last_error() {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  return e;
}

inline xal_status_t init(const std::string& backends,
                         const char* selector = nullptr,
                         int32_t validation = -1) {
  xal_init_options_t o{};
  o.struct_size = sizeof o;
  o.backends = backends.c_str();
  o.backend_path = "";
  o.device_selector = selector ? selector : "";
  o.validation = validation;
  return xal_init(&o);
}

// Sets an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) setenv(name, value, 1); else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
  }
 private:
  std::string name_, old_;
  bool had_ = false;
};

// xal initialised with testdev's two devices for each test.
class Xal : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(init(plugin("testdev")), XAL_SUCCESS) << last_error().message;
    ASSERT_EQ(xal_device_get(0, &dev0), XAL_SUCCESS);
    ASSERT_EQ(xal_device_get(1, &dev1), XAL_SUCCESS);
    ASSERT_EQ(xal_stream_create(dev0, 0, &stream0), XAL_SUCCESS);
  }
  void TearDown() override { EXPECT_EQ(xal_shutdown(), XAL_SUCCESS); }

  xal_device_t dev0 = nullptr, dev1 = nullptr;
  xal_stream_t stream0 = nullptr;
};

}  // namespace xal_test

// The call returns `status`, and xal_last_error holds it with a message.
#define EXPECT_XAL_ERROR(call, expected)                                  \
  do {                                                                    \
    const xal_status_t s_ = (call);                                       \
    EXPECT_EQ(s_, (expected)) << #call << " gave " << xal_status_name(s_) \
                              << ": " << xal_test::last_error().message;  \
    const xal_error_info_t e_ = xal_test::last_error();                   \
    EXPECT_EQ(e_.status, (expected)) << #call;                            \
    EXPECT_STRNE(e_.message, "") << #call;                                \
  } while (0)

#define ASSERT_XAL_OK(call)                                               \
  do {                                                                    \
    const xal_status_t s_ = (call);                                       \
    ASSERT_EQ(s_, XAL_SUCCESS) << #call << " gave " << xal_status_name(s_) \
                               << ": " << xal_test::last_error().message; \
  } while (0)

namespace xal_test {

// The ranks of a communicator under test: each one's device, stream and
// send/recv buffers (comm is filled by the test).
struct RankSet {
  std::vector<xal_device_t> dev;
  std::vector<xal_stream_t> stream;
  std::vector<xal_comm_t> comm;
  std::vector<xal_devptr_t> send, recv;

  // Appends device `index` with a stream and two buffers of `bytes`; a
  // fatal failure of the test when one cannot be made (wrap the call in
  // ASSERT_NO_FATAL_FAILURE).
  void add_rank(uint32_t index, size_t bytes) {
    xal_device_t d;
    ASSERT_XAL_OK(xal_device_get(index, &d));
    dev.push_back(d);
    xal_stream_t s;
    ASSERT_XAL_OK(xal_stream_create(d, 0, &s));
    stream.push_back(s);
    xal_devptr_t a, b;
    ASSERT_XAL_OK(xal_mem_alloc(d, bytes, &a));
    ASSERT_XAL_OK(xal_mem_alloc(d, bytes, &b));
    send.push_back(a);
    recv.push_back(b);
  }
  // Copies int32 values into rank r's send buffer, and waits.
  void put(size_t r, const std::vector<int32_t>& v) {
    ASSERT_XAL_OK(xal_memcpy_htod(stream[r], send[r], v.data(), v.size() * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
  }
  // The first n int32 values of rank r's recv buffer (after its stream).
  std::vector<int32_t> get(size_t r, size_t n) {
    std::vector<int32_t> v(n);
    EXPECT_EQ(xal_memcpy_dtoh(stream[r], v.data(), recv[r], n * 4), XAL_SUCCESS);
    EXPECT_EQ(xal_stream_synchronize(stream[r]), XAL_SUCCESS);
    return v;
  }
  // Rank r's communicator's asynchronous error.
  xal_status_t async_error(size_t r) {
    xal_status_t e = XAL_SUCCESS;
    EXPECT_EQ(xal_comm_get_async_error(comm[r], &e), XAL_SUCCESS);
    return e;
  }
};

}  // namespace xal_test
