// The HIP backend's error paths on the simulated runtime: each injected
// HIP code surfaces with its xal status, code and name; sticky errors hold
// until reset; a missing or incomplete runtime, or no device, leaves the
// backend UNAVAILABLE with the reason.
#include <vector>

#include "../src/dynamic_symbols.h"
#include "../src/status_map.h"
#include "plugin_fixture.h"

namespace xal::hip::testing {
namespace {

using xaltest::InjectedCase;

class HipErrors : public HipPlugin {
 protected:
  // Runs the operation the plan's function serves.
  xal_status_t run(const std::string& plan) {
    xal_devptr_t ptr = 0;
    uint8_t byte = 0;
    if (plan.starts_with("hipMalloc")) return table_->mem_alloc(dev0_, 64, &ptr);
    if (plan.starts_with("hipStreamSynchronize")) {
      return table_->stream_synchronize(stream_);
    }
    if (plan.starts_with("hipStreamQuery")) return table_->stream_query(stream_);
    if (plan.starts_with("hipMemcpyHtoDAsync")) {
      EXPECT_EQ(table_->mem_alloc(dev0_, 64, &ptr), XAL_SUCCESS);
      return table_->memcpy_htod(stream_, ptr, &byte, 1);
    }
    if (plan.starts_with("hipStreamCreateWithFlags")) {
      xal_bstream_t* stream = nullptr;
      return table_->stream_create(dev0_, 0, &stream);
    }
    if (plan.starts_with("hipDeviceSynchronize")) {
      return table_->device_synchronize(dev0_);
    }
    ADD_FAILURE() << "no operation for " << plan;
    return XAL_ERROR_INTERNAL;
  }
};

TEST_F(HipErrors, EveryInjectedCodeMapsWithItsVendorCodeAndName) {
  const std::vector<InjectedCase> cases = {
      {"hipMalloc=2", XAL_ERROR_OUT_OF_MEMORY, 2, "hipErrorOutOfMemory", false},
      {"hipMalloc=1", XAL_ERROR_INVALID_ARGUMENT, 1, "hipErrorInvalidValue", false},
      {"hipMalloc=3", XAL_ERROR_NOT_INITIALIZED, 3, "hipErrorNotInitialized", false},
      {"hipMalloc=1052", XAL_ERROR_OUT_OF_HOST_MEMORY, 1052, "hipErrorRuntimeMemory", false},
      {"hipMemcpyHtoDAsync=17", XAL_ERROR_INVALID_ARGUMENT, 17,
       "hipErrorInvalidDevicePointer", false},
      {"hipStreamCreateWithFlags=801", XAL_ERROR_NOT_SUPPORTED, 801,
       "hipErrorNotSupported", false},
      {"hipStreamSynchronize=400", XAL_ERROR_INVALID_HANDLE, 400,
       "hipErrorInvalidHandle", false},
      {"hipStreamSynchronize=999", XAL_ERROR_BACKEND, 999, "hipErrorUnknown", false},
      {"hipStreamSynchronize=4242", XAL_ERROR_BACKEND, 4242, "hipErrorUnrecognized",
       false},
      {"hipStreamQuery=600", XAL_NOT_READY, 0, "", false},
      {"hipDeviceSynchronize=700", XAL_ERROR_DEVICE_LOST, 700, "hipErrorIllegalAddress",
       true},
      {"hipStreamSynchronize=710", XAL_ERROR_DEVICE_LOST, 710, "hipErrorAssert", true},
      {"hipStreamSynchronize=719", XAL_ERROR_DEVICE_LOST, 719, "hipErrorLaunchFailure",
       true},
      {"hipStreamSynchronize=702", XAL_ERROR_TIMEOUT, 702, "hipErrorLaunchTimeOut",
       true},
      {"hipMalloc=214", XAL_ERROR_HARDWARE, 214, "hipErrorECCNotCorrectable", true},
  };
  for (const InjectedCase& c : cases) {
    expect_injected(c, [&] { return run(c.plan); });
  }
}

TEST_F(HipErrors, StickyErrorHoldsUntilResetThenOldObjectsAreInvalid) {
  xal_devptr_t before = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 128, &before), XAL_SUCCESS);
  xal_bevent_t* event = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &event), XAL_SUCCESS);
  setenv("XALSIM_HIP_FAIL", "hipStreamSynchronize=700@1", 1);
  EXPECT_EQ(table_->stream_synchronize(stream_), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last_error().vendor_name, "hipErrorIllegalAddress");
  // Every later call on the device fails, the other device works.
  EXPECT_EQ(table_->stream_synchronize(stream_), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(table_->memset(stream_, before, 0, 128), XAL_ERROR_DEVICE_LOST);
  EXPECT_NE(last_error().message.find("xal_device_reset"), std::string::npos);
  xal_devptr_t other = 0;
  EXPECT_EQ(table_->mem_alloc(dev1_, 128, &other), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev1_, other), XAL_SUCCESS);

  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  xal_device_health_t health{};
  health.struct_size = sizeof health;
  ASSERT_EQ(table_->device_get_health(dev0_, &health), XAL_SUCCESS);
  EXPECT_EQ(health.state, static_cast<uint32_t>(XAL_HEALTH_OK));
  // Objects from before the reset are gone.
  EXPECT_EQ(table_->stream_synchronize(stream_), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(table_->event_query(event), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(table_->stream_destroy(stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->event_destroy(event), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, before), XAL_SUCCESS);
  // The device works again.
  ASSERT_EQ(table_->stream_create(dev0_, 0, &stream_), XAL_SUCCESS);
  xal_devptr_t after = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 128, &after), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream_, after, 7, 128), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, after), XAL_SUCCESS);
}

TEST_F(HipErrors, KernelFaultIsSticky) {
  const std::string image = "XALSIM-HSACO\nfill_u32\n";
  xal_bmodule_t* module = nullptr;
  ASSERT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_HSACO, image.c_str(),
                                image.size() + 1, &module),
            XAL_SUCCESS);
  xal_bkernel_t* kernel = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "fill_u32", &kernel), XAL_SUCCESS);
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 16, &a), XAL_SUCCESS);
  uint32_t value = 1;
  uint64_t n = 1000;  // past the end of the allocation
  void* args[] = {&a, &value, &n};
  xal_launch_config_t config{sizeof config, {1, 1, 1}, {1, 1, 1}, 0, nullptr};
  EXPECT_EQ(table_->kernel_launch(stream_, kernel, &config, args, 3),
            XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last_error().vendor_code, 700);
  EXPECT_EQ(table_->device_synchronize(dev0_), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  EXPECT_EQ(table_->device_synchronize(dev0_), XAL_SUCCESS);
}

// On a device with a sticky error the memory goes with the device: freeing
// succeeds at once (the core then drops its record), and the reset that
// follows leaves nothing to free twice.
TEST_F(HipErrors, FreeOnAFaultedDeviceSucceeds) {
  xal_devptr_t ptr = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 256, &ptr), XAL_SUCCESS);
  setenv("XALSIM_HIP_FAIL", "hipStreamSynchronize=700@1", 1);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_ERROR_DEVICE_LOST);
  unsetenv("XALSIM_HIP_FAIL");
  EXPECT_EQ(table_->mem_free(dev0_, ptr), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(table_->mem_free(dev0_, ptr), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, ptr), XAL_ERROR_INVALID_ARGUMENT);
}

// A hipFree that fails keeps the allocation: the core keeps its record and
// the free can be tried again.
TEST_F(HipErrors, FailedFreeKeepsTheAllocationForARetry) {
  xal_devptr_t ptr = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 256, &ptr), XAL_SUCCESS);
  setenv("XALSIM_HIP_FAIL", "hipFree=1@1", 1);
  EXPECT_EQ(table_->mem_free(dev0_, ptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_name, "hipErrorInvalidValue");
  EXPECT_EQ(table_->mem_free(dev0_, ptr), XAL_SUCCESS) << last_error().message;
  unsetenv("XALSIM_HIP_FAIL");
  EXPECT_EQ(table_->mem_free(dev0_, ptr), XAL_ERROR_INVALID_ARGUMENT);
}

// A stream or event whose destroy fails stays live (the core keeps its
// handle): the retry releases it. On a device with a sticky error,
// destroying needs no HIP call and succeeds.
TEST_F(HipErrors, FailedDestroyKeepsTheObjectForARetry) {
  xal_bevent_t* event = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &event), XAL_SUCCESS);
  setenv("XALSIM_HIP_FAIL", "hipEventDestroy=400@1", 1);
  EXPECT_EQ(table_->event_destroy(event), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(last_error().vendor_code, 400);
  EXPECT_EQ(table_->event_destroy(event), XAL_SUCCESS) << last_error().message;

  // The destroy's own wait is what faults the device.
  ASSERT_EQ(table_->event_create(dev0_, 0, &event), XAL_SUCCESS);
  setenv("XALSIM_HIP_FAIL", "hipStreamSynchronize=700@1", 1);
  EXPECT_EQ(table_->stream_destroy(stream_), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last_error().vendor_code, 700);
  unsetenv("XALSIM_HIP_FAIL");
  EXPECT_EQ(table_->stream_destroy(stream_), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(table_->event_destroy(event), XAL_SUCCESS) << last_error().message;
  stream_ = nullptr;
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
}

// libxal drops a module whatever module_unload returns (xal_backend.h), so
// a refused hipModuleUnload is reported and the module released all the
// same: shutdown does not unload it a second time.
TEST_F(HipErrors, RefusedModuleUnloadStillReleasesTheModule) {
  void* sim = dlopen(XAL_HIP_SIM_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(sim, nullptr);
  auto* unloads = reinterpret_cast<int (*)()>(dlsym(sim, "xalsim_hip_module_unloads"));
  ASSERT_NE(unloads, nullptr);
  const std::string image = "XALSIM-HSACO\nfill_u32\n";
  xal_bmodule_t* module = nullptr;
  ASSERT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_HSACO, image.c_str(),
                                image.size() + 1, &module),
            XAL_SUCCESS);
  xal_bkernel_t* kernel = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "fill_u32", &kernel), XAL_SUCCESS);
  const int before = unloads();
  setenv("XALSIM_HIP_FAIL", "hipModuleUnload=400@1", 1);
  EXPECT_EQ(table_->module_unload(module), XAL_ERROR_INVALID_HANDLE);
  unsetenv("XALSIM_HIP_FAIL");
  EXPECT_EQ(last_error().vendor_code, 400);
  EXPECT_EQ(last_error().vendor_name, "hipErrorInvalidHandle");
  ASSERT_EQ(table_->shutdown(backend_), XAL_SUCCESS);
  backend_ = nullptr;
  EXPECT_EQ(unloads(), before);
  dlclose(sim);
}

TEST(HipUnavailable, BadLibraryPathGivesDlerrorText) {
  setenv("XAL_HIP_LIBRARY", "/nonexistent/libamdhip64.so.5", 1);
  last_error() = ErrorDetail{};
  EXPECT_EQ(init_expecting_failure(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(last_error().message.find("/nonexistent/libamdhip64.so.5"),
            std::string::npos);
  EXPECT_NE(last_error().message.find("No such file"), std::string::npos)
      << last_error().message;
}

TEST(HipUnavailable, EverySonameTriedIsListed) {
  HipLibrary library;
  std::string error;
  EXPECT_FALSE(library.load_first({"libamdhip64.so.97", "libamdhip64.so.96"},
                                  false, &error));
  EXPECT_NE(error.find("no HIP runtime found"), std::string::npos) << error;
  EXPECT_NE(error.find("libamdhip64.so.97: "), std::string::npos) << error;
  EXPECT_NE(error.find("libamdhip64.so.96: "), std::string::npos) << error;
  const auto names = HipLibrary::candidate_sonames();
  EXPECT_NE(std::find(names.begin(), names.end(), "libamdhip64.so.6"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "libamdhip64.so.5"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "libamdhip64.so.4"), names.end());
}

TEST(HipUnavailable, RuntimeLackingARequiredFunctionIsNamed) {
  setenv("XAL_HIP_LIBRARY", XAL_HIP_SIM_INCOMPLETE_PATH, 1);
  EXPECT_EQ(init_expecting_failure(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(last_error().message.find("hipMemsetD8Async"), std::string::npos)
      << last_error().message;
}

TEST(HipUnavailable, NoDevices) {
  setenv("XAL_HIP_LIBRARY", XAL_HIP_SIM_PATH, 1);
  setenv("XALSIM_HIP_DEVICES", "0", 1);
  EXPECT_EQ(init_expecting_failure(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(last_error().vendor_code, 100);
  EXPECT_EQ(last_error().vendor_name, "hipErrorNoDevice");
  setenv("XALSIM_HIP_DEVICES", "2", 1);
}

TEST(HipUnavailable, FailingInitKeepsTheCode) {
  setenv("XAL_HIP_LIBRARY", XAL_HIP_SIM_PATH, 1);
  setenv("XALSIM_HIP_FAIL", "hipInit=35", 1);
  EXPECT_EQ(init_expecting_failure(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(last_error().vendor_code, 35);
  EXPECT_NE(last_error().message.find("hipErrorInsufficientDriver"),
            std::string::npos);
  unsetenv("XALSIM_HIP_FAIL");
}

TEST(HipStatusMap, KnownCodesHaveTheirEnumeratorNames) {
  EXPECT_EQ(map_status(hipSuccess).status, XAL_SUCCESS);
  EXPECT_STREQ(map_status(hipErrorIllegalAddress).name, "hipErrorIllegalAddress");
  EXPECT_TRUE(map_status(hipErrorIllegalAddress).sticky);
  EXPECT_FALSE(map_status(hipErrorOutOfMemory).sticky);
  EXPECT_EQ(map_status(hipErrorNotReady).status, XAL_NOT_READY);
  EXPECT_EQ(map_status(hipErrorNoDevice).status, XAL_ERROR_BACKEND_UNAVAILABLE);
  // Every enumerator of the header between 1 and 1053 that HIP defines
  // maps to an error (never to success) with a name.
  for (int code = 1; code < 1100; ++code) {
    const StatusMapping m = map_status(code);
    EXPECT_NE(m.status, XAL_SUCCESS) << code;
    EXPECT_NE(m.name, nullptr);
  }
}

}  // namespace
}  // namespace xal::hip::testing
