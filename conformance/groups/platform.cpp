// Group "platform": initialisation and shutdown cycles, backend listing and
// reasons, versions and status names.
#include <cstring>
#include <set>
#include <string>

#include "conform.hpp"
#include "helpers.hpp"

namespace {

using conform::Suite;

TEST(platform, InitSucceeded) {
  ASSERT_EQ(Suite::get().init_status(), XAL_SUCCESS)
      << "xal_init: " << Suite::get().init_message();
  uint32_t count = 0;
  XAL_ASSERT_OK(xal_device_count(&count));
  EXPECT_GT(count, 0u) << "xal_init succeeded but no device is present";
}

TEST(platform, AbiVersion) {
  const uint32_t version = xal_abi_version();
  EXPECT_EQ(XAL_ABI_MAJOR(version), XAL_ABI_VERSION_MAJOR)
      << "libxal reports ABI " << XAL_ABI_MAJOR(version) << "."
      << XAL_ABI_MINOR(version) << ", the suite was built for "
      << XAL_ABI_VERSION_MAJOR << "." << XAL_ABI_VERSION_MINOR;
  EXPECT_GE(XAL_ABI_MINOR(version), static_cast<uint32_t>(XAL_ABI_VERSION_MINOR))
      << "libxal is older than the headers the suite was built with";
}

TEST(platform, StatusNames) {
  std::set<std::string> names;
  for (int s = 1; s > -XAL_STATUS_COUNT; --s) {
    const char* name = xal_status_name(s);
    ASSERT_NE(name, nullptr) << "status " << s;
    EXPECT_EQ(std::strncmp(name, "XAL_", 4), 0) << "status " << s << ": " << name;
    EXPECT_STRNE(name, "XAL_STATUS_UNKNOWN") << "status " << s;
    EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
  }
  EXPECT_STREQ(xal_status_name(XAL_SUCCESS), "XAL_SUCCESS");
  EXPECT_STREQ(xal_status_name(XAL_ERROR_OUT_OF_MEMORY), "XAL_ERROR_OUT_OF_MEMORY");
  EXPECT_STREQ(xal_status_name(-1000), "XAL_STATUS_UNKNOWN");
  EXPECT_STREQ(xal_status_name(1000), "XAL_STATUS_UNKNOWN");
}

TEST(platform, BackendListing) {
  ASSERT_TRUE(Suite::get().initialized()) << Suite::get().init_message();
  uint32_t count = 0;
  XAL_ASSERT_OK(xal_backend_count(&count));
  ASSERT_GT(count, 0u) << "no backend was considered";
  uint32_t loaded_devices = 0;
  for (uint32_t i = 0; i < count; ++i) {
    xal_backend_info_t info{};
    info.struct_size = sizeof(info);
    XAL_ASSERT_OK(xal_backend_get_info(i, &info));
    EXPECT_STRNE(info.name, "") << "backend " << i << " has no name";
    EXPECT_LE(info.state, static_cast<uint32_t>(XAL_BACKEND_STATE_FAILED))
        << info.name;
    if (info.state == XAL_BACKEND_STATE_LOADED) {
      EXPECT_EQ(info.status, XAL_SUCCESS) << info.name;
      EXPECT_EQ(XAL_ABI_MAJOR(info.abi_version), XAL_ABI_VERSION_MAJOR)
          << info.name << " was built for another ABI major";
      EXPECT_STRNE(info.path, "") << info.name << ": loaded from no path";
      loaded_devices += info.device_count;
    } else {
      EXPECT_NE(info.status, XAL_SUCCESS)
          << info.name << " is not loaded but has no error status";
      EXPECT_STRNE(info.reason, "") << info.name << " is not loaded: no reason";
    }
  }
  uint32_t devices = 0;
  XAL_ASSERT_OK(xal_device_count(&devices));
  EXPECT_EQ(loaded_devices, devices)
      << "the backends' device counts do not add up to xal_device_count";
  xal_backend_info_t info{};
  info.struct_size = sizeof(info);
  XAL_EXPECT_STATUS(xal_backend_get_info(count, &info), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_backend_get_info(0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
}

TEST(platform, InitShutdownCycles) {
  ASSERT_TRUE(Suite::get().initialized()) << Suite::get().init_message();
  const auto before = Suite::get().all_devices();
  XAL_EXPECT_STATUS(xal_init(nullptr), XAL_ERROR_INVALID_ARGUMENT);
  for (int cycle = 0; cycle < 3; ++cycle) {
    XAL_ASSERT_OK(xal_shutdown());
    uint32_t count = 0;
    XAL_EXPECT_STATUS(xal_device_count(&count), XAL_ERROR_NOT_INITIALIZED);
    XAL_EXPECT_STATUS(xal_shutdown(), XAL_ERROR_NOT_INITIALIZED);
    const xal_status_t s = xal_init(nullptr);
    ASSERT_EQ(s, XAL_SUCCESS) << "cycle " << cycle << ": xal_init returned "
                              << conform::describe(s);
    XAL_ASSERT_OK(xal_device_count(&count));
    ASSERT_EQ(count, before.size()) << "cycle " << cycle;
    for (uint32_t i = 0; i < count; ++i) {
      xal_device_t dev = nullptr;
      XAL_ASSERT_OK(xal_device_get(i, &dev));
      xal_device_properties_t props{};
      props.struct_size = sizeof(props);
      XAL_ASSERT_OK(xal_device_get_properties(dev, &props));
      EXPECT_STREQ(props.name, before[i].props.name) << "device " << i;
      EXPECT_EQ(std::memcmp(props.uuid, before[i].props.uuid, 16), 0)
          << "device " << i << " changed its uuid across init cycles";
    }
  }
  // Hand the suite fresh handles for the tests that follow.
  const xal_status_t s = Suite::get().reinitialize();
  ASSERT_EQ(s, XAL_SUCCESS) << conform::describe(s);
  for (const auto& info : Suite::get().devices()) {
    const std::string problem = conform::round_trip(info.handle);
    EXPECT_EQ(problem, "") << "device " << info.index << " after init cycles";
  }
}

TEST(platform, LastError) {
  // xal_last_error keeps the detail it reports, even when misused.
  EXPECT_EQ(xal_last_error(nullptr), XAL_ERROR_INVALID_ARGUMENT);
  xal_error_info_t small{};
  small.struct_size = 4;
  EXPECT_EQ(xal_last_error(&small), XAL_ERROR_INVALID_ARGUMENT);
  // A failing call leaves its operation and message.
  uint32_t count = 0;
  ASSERT_EQ(xal_backend_count(&count), XAL_SUCCESS);
  xal_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(xal_backend_get_info(count + 7, &info), XAL_ERROR_INVALID_ARGUMENT);
  const xal_error_info_t error = conform::last_error();
  EXPECT_EQ(error.status, XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error.operation, "xal_backend_get_info");
  EXPECT_STRNE(error.message, "");
}

}  // namespace
