// Helpers shared by the core's unit tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

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
