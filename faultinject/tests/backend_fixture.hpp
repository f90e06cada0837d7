// The fixture of the fault plugin's table tests: the plugin loaded with
// dlopen over the fake target of fake_target.hpp.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fake_target.hpp"
#include "xal/xal_fault.h"

namespace xal::fault::testing {

inline const xal_backend_table_t* plugin() {
  static const xal_backend_table_t* table = [] {
    void* h = ::dlopen(XAL_FAULT_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return static_cast<const xal_backend_table_t*>(nullptr);
    auto get = reinterpret_cast<xal_backend_get_fn>(
        ::dlsym(h, XAL_BACKEND_ENTRY_SYMBOL));
    return get != nullptr ? get(XAL_ABI_VERSION) : nullptr;
  }();
  return table;
}

class FaultBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(plugin(), nullptr) << "cannot load " << XAL_FAULT_PLUGIN_PATH;
    t = plugin();
    config().clear();
    use_minimal_fake(false);
    log_path = ::testing::TempDir() + "/fault_backend_test_" +
               std::to_string(::getpid()) + ".log";
    std::remove(log_path.c_str());
  }
  void TearDown() override {
    stop();
    std::remove(log_path.c_str());
  }
  xal_status_t start(const char* faults, const char* argument = "fake") {
    if (faults != nullptr) config()["XAL_FAULTS"] = faults;
    config()["XAL_FAULT_LOG"] = log_path;
    xal_backend_init_args_t args{sizeof args, services(), argument};
    return t->init(&args, &b);
  }
  void stop() {
    if (b != nullptr) t->shutdown(b);
    b = nullptr;
  }
  xal_bdevice_t* dev(uint32_t i) {
    xal_bdevice_t* d = nullptr;
    EXPECT_EQ(t->device_get(b, i, &d), XAL_SUCCESS);
    return d;
  }
  xal_bstream_t* stream(xal_bdevice_t* d) {
    xal_bstream_t* s = nullptr;
    EXPECT_EQ(t->stream_create(d, 0, &s), XAL_SUCCESS);
    return s;
  }
  const xal_fault_control_v1_t* control() {
    return static_cast<const xal_fault_control_v1_t*>(
        t->get_extension(b, XAL_FAULT_CONTROL_EXTENSION));
  }
  std::vector<nlohmann::json> log_lines() {
    std::vector<nlohmann::json> out;
    std::ifstream in(log_path);
    std::string line;
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  xal_device_health_t health(xal_bdevice_t* d) {
    xal_device_health_t h{};
    h.struct_size = sizeof h;
    EXPECT_EQ(t->device_get_health(d, &h), XAL_SUCCESS);
    return h;
  }

  const xal_backend_table_t* t = nullptr;
  xal_backend_t* b = nullptr;
  std::string log_path;
};

}  // namespace xal::fault::testing
