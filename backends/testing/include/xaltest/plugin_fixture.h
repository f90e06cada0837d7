// Test support shared by the vendor backends' unit tests: a services table
// that records the error detail a plugin reports, the plugin's table
// opened straight from its file, and a fixture that starts an instance on
// the backend's simulated driver for each test (TESTS ONLY).
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "xal/xal_backend.h"

namespace xaltest {

// Sets an environment variable for one scope (nullptr: unset it), and puts
// back what was there. Tests run one at a time.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      had_ = true;
      old_ = old;
    }
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// Error detail a plugin reported through services->set_error.
struct ErrorDetail {
  xal_status_t status = XAL_SUCCESS;
  int64_t vendor_code = 0;
  std::string vendor_name;
  std::string message;
};

// The detail reported last on the calling thread (per thread, writable).
inline ErrorDetail& last_error() {
  thread_local ErrorDetail detail;
  return detail;
}

// services->set_error: keeps a copy of the detail; returns `status`.
inline xal_status_t record_error(xal_status_t status, int64_t code,
                                 const char* name, const char* message) {
  last_error() = ErrorDetail{status, code, name != nullptr ? name : "",
                             message != nullptr ? message : ""};
  return status;
}

inline void log_line(int, const char*, const char*) {}

inline xal_status_t no_load(const char*, const xal_backend_table_t**, char*,
                            size_t) {
  return XAL_ERROR_NOT_SUPPORTED;
}

inline const char* env_config(const char* key) { return std::getenv(key); }

// The services table handed to the plugin (static storage, thread-safe).
inline const xal_backend_services_t* test_services() {
  static const xal_backend_services_t services = {
      sizeof(xal_backend_services_t), XAL_ABI_VERSION, record_error, log_line,
      no_load, env_config};
  return &services;
}

// The table of the plugin file `path` for this ABI, or null (dlerror()
// says why). Each file is opened once per process and never closed; the
// table is owned by the plugin. Thread-safe.
inline const xal_backend_table_t* open_plugin_table(const char* path) {
  static std::mutex mutex;
  static std::map<std::string, const xal_backend_table_t*> tables;
  std::lock_guard lock(mutex);
  auto found = tables.find(path);
  if (found != tables.end()) return found->second;
  const xal_backend_table_t* table = nullptr;
  if (void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL); handle != nullptr) {
    auto get = reinterpret_cast<xal_backend_get_fn>(
        dlsym(handle, XAL_BACKEND_ENTRY_SYMBOL));
    table = get != nullptr ? get(XAL_ABI_VERSION) : nullptr;
  }
  if (table != nullptr) tables.emplace(path, table);
  return table;
}

// Starts an instance of `table` with the current environment and the test
// services; the caller shuts it down.
inline xal_status_t init_instance(const xal_backend_table_t* table, xal_backend_t** out) {
  xal_backend_init_args_t args{sizeof args, test_services(), nullptr};
  return table->init(&args, out);
}

// Starts an instance of `table` with the current environment, expecting
// failure (an instance that starts is shut down again).
inline xal_status_t init_expecting_failure(const xal_backend_table_t* table) {
  xal_backend_t* backend = nullptr;
  const xal_status_t status = init_instance(table, &backend);
  if (status == XAL_SUCCESS) table->shutdown(backend);
  return status;
}

// One injected vendor error: the plan for the simulator's fail variable,
// and the status, vendor code and name it must surface with; a sticky one
// leaves the device failing until it is reset.
struct InjectedCase {
  const char* plan;
  xal_status_t status;
  int64_t code;
  const char* name;
  bool sticky;
  bool name_in_message = true;  // the message names the code too
};

// A fixture with a fresh instance of the plugin on its simulated driver,
// its first two devices and a stream on the first. `Simulation` gives:
//   static const xal_backend_table_t* table();  the plugin's table
//   static void prepare();                      the environment of a test
//   static constexpr const char* kFailVariable; the injected-error variable
// Not thread-safe (one test at a time, as GoogleTest runs them).
template <typename Simulation>
class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Simulation::prepare();
    unsetenv(Simulation::kFailVariable);
    table_ = Simulation::table();
    ASSERT_NE(table_, nullptr) << "cannot load the plugin: " << dlerror();
    ASSERT_EQ(init(), XAL_SUCCESS) << last_error().message;
    uint32_t count = 0;
    ASSERT_EQ(table_->device_count(backend_, &count), XAL_SUCCESS);
    ASSERT_GE(count, 2u) << "the simulation is configured with 2 devices";
    ASSERT_EQ(table_->device_get(backend_, 0, &dev0_), XAL_SUCCESS);
    ASSERT_EQ(table_->device_get(backend_, 1, &dev1_), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_create(dev0_, 0, &stream_), XAL_SUCCESS);
  }
  void TearDown() override {
    unsetenv(Simulation::kFailVariable);
    if (backend_ != nullptr) {
      EXPECT_EQ(table_->shutdown(backend_), XAL_SUCCESS);
    }
  }
  xal_status_t init() {
    xal_backend_init_args_t args{sizeof args, test_services(), nullptr};
    return table_->init(&args, &backend_);
  }

  // Runs `operation` (returning the status of a table call on dev0_) with
  // `c.plan` injected, and checks what surfaces: the status and, but for
  // XAL_NOT_READY (no detail), the reported code and name (the name also in
  // the message, unless the case says otherwise). A sticky case keeps failing with nothing injected and
  // shows in dev0_'s health (LOST for DEVICE_LOST, else ERROR) until the
  // device is reset, after which stream_ is made again; any other case
  // leaves the device healthy.
  template <typename Operation>
  void expect_injected(const InjectedCase& c, Operation&& operation) {
    SCOPED_TRACE(c.plan);
    last_error() = ErrorDetail{};
    setenv(Simulation::kFailVariable, c.plan, 1);
    EXPECT_EQ(operation(), c.status);
    unsetenv(Simulation::kFailVariable);
    if (c.status != XAL_NOT_READY) {
      EXPECT_EQ(last_error().status, c.status);
      EXPECT_EQ(last_error().vendor_code, c.code);
      EXPECT_EQ(last_error().vendor_name, c.name);
      if (c.name_in_message) {
        EXPECT_NE(last_error().message.find(c.name), std::string::npos)
            << last_error().message;
      }
    }
    xal_device_health_t health{};
    health.struct_size = sizeof health;
    ASSERT_EQ(table_->device_get_health(dev0_, &health), XAL_SUCCESS);
    if (!c.sticky) {
      EXPECT_EQ(health.state, static_cast<uint32_t>(XAL_HEALTH_OK));
      return;
    }
    xal_devptr_t ptr = 0;
    EXPECT_EQ(table_->mem_alloc(dev0_, 64, &ptr), c.status);
    EXPECT_EQ(last_error().vendor_code, c.code);
    const auto state = c.status == XAL_ERROR_DEVICE_LOST ? XAL_HEALTH_LOST
                                                         : XAL_HEALTH_ERROR;
    EXPECT_EQ(health.state, static_cast<uint32_t>(state));
    EXPECT_EQ(health.vendor_code, c.code);
    ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_create(dev0_, 0, &stream_), XAL_SUCCESS);
  }

  // Copies `size` bytes (byte i is i * multiplier + addend) host -> device
  // -> device -> host through two fresh allocations of dev0_, at `offset`
  // into each, on stream_, and checks they come back as written.
  void expect_copy_round_trip(size_t size, size_t offset, unsigned multiplier,
                              unsigned addend) {
    SCOPED_TRACE("size " + std::to_string(size) + " offset " +
                 std::to_string(offset));
    xal_devptr_t a = 0, b = 0;
    ASSERT_EQ(table_->mem_alloc(dev0_, size + offset, &a), XAL_SUCCESS);
    ASSERT_EQ(table_->mem_alloc(dev0_, size + offset, &b), XAL_SUCCESS);
    std::vector<uint8_t> in(size), out(size, 0);
    for (size_t i = 0; i < size; ++i) {
      in[i] = static_cast<uint8_t>(i * multiplier + addend);
    }
    ASSERT_EQ(table_->memcpy_htod(stream_, a + offset, in.data(), size), XAL_SUCCESS);
    ASSERT_EQ(table_->memcpy_dtod(stream_, b + offset, a + offset, size), XAL_SUCCESS);
    ASSERT_EQ(table_->memcpy_dtoh(stream_, out.data(), b + offset, size), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
    EXPECT_EQ(in, out);
    EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
    EXPECT_EQ(table_->mem_free(dev0_, b), XAL_SUCCESS);
  }

  // Zeroes a fresh `total`-byte allocation of dev0_, sets [begin, end) to
  // `value` with the table's memset on stream_, and checks every byte.
  void expect_memset_range(size_t total, size_t begin, size_t end,
                           uint8_t value) {
    xal_devptr_t a = 0;
    ASSERT_EQ(table_->mem_alloc(dev0_, total, &a), XAL_SUCCESS);
    std::vector<uint8_t> zeros(total, 0), out(total, 1);
    ASSERT_EQ(table_->memcpy_htod(stream_, a, zeros.data(), total), XAL_SUCCESS);
    ASSERT_EQ(table_->memset(stream_, a + begin, value, end - begin), XAL_SUCCESS);
    ASSERT_EQ(table_->memcpy_dtoh(stream_, out.data(), a, total), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
    for (size_t i = 0; i < total; ++i) {
      ASSERT_EQ(out[i], (i >= begin && i < end) ? value : 0) << i;
    }
    EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  }

  const xal_backend_table_t* table_ = nullptr;
  xal_backend_t* backend_ = nullptr;
  xal_bdevice_t* dev0_ = nullptr;
  xal_bdevice_t* dev1_ = nullptr;
  xal_bstream_t* stream_ = nullptr;
};

}  // namespace xaltest
