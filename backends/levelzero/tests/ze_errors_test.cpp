// The Level Zero backend's error paths on the simulated loader: each
// injected ze_result_t surfaces with its xal status, code and name; a lost
// device stays lost (with every device of its context) until reset; a
// missing or incomplete loader, or no device, leaves the backend
// UNAVAILABLE with the reason.
#include <cstring>
#include <vector>

#include "../src/status_map.h"
#include "../src/ze_api.h"
#include "plugin_fixture.h"

namespace xal::levelzero::testing {
namespace {

using xaltest::InjectedCase;

class ZeErrors : public ZePlugin {
 protected:
  xal_status_t run(const std::string& plan) {
    xal_devptr_t ptr = 0;
    uint8_t byte = 0;
    if (plan.starts_with("zeMemAllocDevice")) return table_->mem_alloc(dev0_, 64, &ptr);
    if (plan.starts_with("zeEventHostSynchronize")) {
      // Work queued, so that synchronising has something to wait for.
      EXPECT_EQ(table_->mem_alloc(dev0_, 64, &ptr), XAL_SUCCESS);
      EXPECT_EQ(table_->memset(stream_, ptr, 0, 64), XAL_SUCCESS);
      return table_->stream_synchronize(stream_);
    }
    if (plan.starts_with("zeCommandListAppendMemoryCopy")) {
      EXPECT_EQ(table_->mem_alloc(dev0_, 64, &ptr), XAL_SUCCESS);
      return table_->memcpy_htod(stream_, ptr, &byte, 1);
    }
    if (plan.starts_with("zeCommandListCreateImmediate")) {
      xal_bstream_t* stream = nullptr;
      return table_->stream_create(dev0_, 0, &stream);
    }
    if (plan.starts_with("zeEventPoolCreate")) {
      xal_bevent_t* event = nullptr;
      return table_->event_create(dev0_, 0, &event);
    }
    if (plan.starts_with("zeMemAllocHost")) {
      void* host = nullptr;
      return table_->host_alloc(backend_, 64, 0, &host);
    }
    ADD_FAILURE() << "no operation for " << plan;
    return XAL_ERROR_INTERNAL;
  }
};

TEST_F(ZeErrors, EveryInjectedCodeMapsWithItsVendorCodeAndName) {
  const std::vector<InjectedCase> cases = {
      {"zeMemAllocDevice=0x70000003", XAL_ERROR_OUT_OF_MEMORY, 0x70000003,
       "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", false},
      {"zeMemAllocDevice=0x70000002", XAL_ERROR_OUT_OF_HOST_MEMORY, 0x70000002,
       "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY", false},
      {"zeMemAllocDevice=0x78000009", XAL_ERROR_INVALID_ARGUMENT, 0x78000009,
       "ZE_RESULT_ERROR_UNSUPPORTED_SIZE", false},
      {"zeMemAllocHost=0x78000001", XAL_ERROR_NOT_INITIALIZED, 0x78000001,
       "ZE_RESULT_ERROR_UNINITIALIZED", false},
      {"zeCommandListAppendMemoryCopy=0x78000004", XAL_ERROR_INVALID_ARGUMENT, 0x78000004,
       "ZE_RESULT_ERROR_INVALID_ARGUMENT", false},
      {"zeCommandListCreateImmediate=0x78000003", XAL_ERROR_NOT_SUPPORTED, 0x78000003,
       "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE", false},
      {"zeEventPoolCreate=0x78000005", XAL_ERROR_INVALID_HANDLE, 0x78000005,
       "ZE_RESULT_ERROR_INVALID_NULL_HANDLE", false},
      {"zeEventHostSynchronize=0x7ffffffe", XAL_ERROR_BACKEND, 0x7ffffffe,
       "ZE_RESULT_ERROR_UNKNOWN", false},
      {"zeEventHostSynchronize=0x12345", XAL_ERROR_BACKEND, 0x12345, "ZE_RESULT_UNRECOGNIZED",
       false},
      // A wait that never ends: the backend's timeout, named in the message.
      {"zeEventHostSynchronize=1", XAL_ERROR_TIMEOUT, 1, "ZE_RESULT_NOT_READY", false,
       false},
      {"zeEventHostSynchronize=0x70000001", XAL_ERROR_DEVICE_LOST, 0x70000001,
       "ZE_RESULT_ERROR_DEVICE_LOST", true},
      {"zeEventHostSynchronize=0x70000006", XAL_ERROR_DEVICE_LOST, 0x70000006,
       "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET", true},
  };
  for (const InjectedCase& c : cases) {
    expect_injected(c, [&] { return run(c.plan); });
  }
}

TEST_F(ZeErrors, DeviceLostHoldsForTheWholeContextUntilReset) {
  xal_bstream_t* other = nullptr;
  ASSERT_EQ(table_->stream_create(dev1_, 0, &other), XAL_SUCCESS);
  xal_devptr_t before = 0;
  ASSERT_EQ(table_->mem_alloc(dev1_, 128, &before), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(other, before, 0, 128), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream_, 0, 0, 0), XAL_SUCCESS);
  xal_devptr_t mine = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 128, &mine), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream_, mine, 0, 128), XAL_SUCCESS);
  setenv("XALSIM_ZE_FAIL", "zeEventHostSynchronize=0x70000001@1", 1);
  EXPECT_EQ(table_->stream_synchronize(stream_), XAL_ERROR_DEVICE_LOST);
  // Both devices share the lost context.
  EXPECT_EQ(table_->stream_synchronize(other), XAL_ERROR_DEVICE_LOST);
  EXPECT_NE(last_error().message.find("xal_device_reset"), std::string::npos);
  xal_device_health_t health{};
  health.struct_size = sizeof health;
  ASSERT_EQ(table_->device_get_health(dev1_, &health), XAL_SUCCESS);
  EXPECT_EQ(health.state, static_cast<uint32_t>(XAL_HEALTH_LOST));
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_EQ(table_->device_get_metrics(dev1_, &m), XAL_SUCCESS);
  EXPECT_EQ(m.health, static_cast<uint32_t>(XAL_HEALTH_LOST));

  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  ASSERT_EQ(table_->device_get_health(dev1_, &health), XAL_SUCCESS);
  EXPECT_EQ(health.state, static_cast<uint32_t>(XAL_HEALTH_OK));
  // The recreated context invalidated both devices' objects.
  EXPECT_EQ(table_->stream_synchronize(stream_), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(table_->stream_synchronize(other), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(table_->stream_destroy(stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(other), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev1_, before), XAL_SUCCESS);
  // Both work again.
  for (xal_bdevice_t* device : {dev0_, dev1_}) {
    xal_bstream_t* stream = nullptr;
    ASSERT_EQ(table_->stream_create(device, 0, &stream), XAL_SUCCESS);
    xal_devptr_t ptr = 0;
    ASSERT_EQ(table_->mem_alloc(device, 128, &ptr), XAL_SUCCESS);
    ASSERT_EQ(table_->memset(stream, ptr, 1, 128), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_synchronize(stream), XAL_SUCCESS);
    EXPECT_EQ(table_->mem_free(device, ptr), XAL_SUCCESS);
    EXPECT_EQ(table_->stream_destroy(stream), XAL_SUCCESS);
  }
  ASSERT_EQ(table_->stream_create(dev0_, 0, &stream_), XAL_SUCCESS);
}

TEST_F(ZeErrors, ResetOfAHealthyDeviceTouchesOnlyThatDevice) {
  xal_bstream_t* other = nullptr;
  ASSERT_EQ(table_->stream_create(dev1_, 0, &other), XAL_SUCCESS);
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream_), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(table_->stream_synchronize(other), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(other), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_create(dev0_, 0, &stream_), XAL_SUCCESS);
}

TEST_F(ZeErrors, KernelFaultLosesTheDevice) {
  std::vector<uint8_t> image(4);
  const uint32_t magic = 0x07230203;
  std::memcpy(image.data(), &magic, 4);
  const std::string text = "kernel fill_u32\n";
  image.insert(image.end(), text.begin(), text.end());
  xal_bmodule_t* module = nullptr;
  ASSERT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_SPIRV, image.data(), image.size(),
                                &module),
            XAL_SUCCESS);
  xal_bkernel_t* kernel = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "fill_u32", &kernel), XAL_SUCCESS);
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 16, &a), XAL_SUCCESS);
  uint32_t value = 1;
  uint64_t n = 1000;
  void* args[] = {&a, &value, &n};
  const size_t sizes[] = {8, 4, 8};
  xal_launch_config_t config{sizeof config, {1, 1, 1}, {1, 1, 1}, 0, sizes};
  EXPECT_EQ(table_->kernel_launch(stream_, kernel, &config, args, 3), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(table_->device_synchronize(dev0_), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  EXPECT_EQ(table_->kernel_get(module, "fill_u32", &kernel), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(table_->module_unload(module), XAL_SUCCESS);
  EXPECT_EQ(table_->device_synchronize(dev0_), XAL_SUCCESS);
}

// A wait on an event of another driver is done on the host; when that
// wait gives up it is a timeout, not a silent NOT_READY.
TEST_F(ZeErrors, CrossDriverWaitThatGivesUpIsATimeout) {
  xaltest::ScopedEnv drivers("XALSIM_ZE_DRIVERS", "2");  // dev1_ on a second driver
  restart();
  if (HasFatalFailure()) return;
  xal_bevent_t* event = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &event), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(event, stream_), XAL_SUCCESS);
  xal_bstream_t* other = nullptr;
  ASSERT_EQ(table_->stream_create(dev1_, 0, &other), XAL_SUCCESS);
  setenv("XALSIM_ZE_FAIL", "zeEventHostSynchronize=1", 1);
  EXPECT_EQ(table_->stream_wait_event(other, event), XAL_ERROR_TIMEOUT);
  unsetenv("XALSIM_ZE_FAIL");
  EXPECT_EQ(last_error().vendor_name, "ZE_RESULT_NOT_READY");
  EXPECT_EQ(table_->stream_wait_event(other, event), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(other), XAL_SUCCESS);
  EXPECT_EQ(table_->event_destroy(event), XAL_SUCCESS);
}

// Host memory lives in the driver's context, which the reset of a lost
// device replaces: the memory stays usable and can be freed.
TEST_F(ZeErrors, HostMemoryOutlivesTheResetOfALostDevice) {
  void* host = nullptr;
  ASSERT_EQ(table_->host_alloc(backend_, 4096, 0, &host), XAL_SUCCESS);
  void* spare = nullptr;
  ASSERT_EQ(table_->host_alloc(backend_, 64, 0, &spare), XAL_SUCCESS);
  std::memset(host, 0x5A, 4096);
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 4096, &a), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream_, a, 0, 4096), XAL_SUCCESS);
  setenv("XALSIM_ZE_FAIL", "zeEventHostSynchronize=0x70000001@1", 1);
  EXPECT_EQ(table_->stream_synchronize(stream_), XAL_ERROR_DEVICE_LOST);
  unsetenv("XALSIM_ZE_FAIL");
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  EXPECT_EQ(table_->host_free(backend_, spare), XAL_SUCCESS);
  EXPECT_EQ(static_cast<const uint8_t*>(host)[4095], 0x5A);
  EXPECT_EQ(table_->stream_destroy(stream_), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_create(dev0_, 0, &stream_), XAL_SUCCESS);
  ASSERT_EQ(table_->mem_alloc(dev0_, 4096, &a), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_htod(stream_, a, host, 4096), XAL_SUCCESS);
  std::vector<uint8_t> out(4096);
  ASSERT_EQ(table_->memcpy_dtoh(stream_, out.data(), a, 4096), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(out, std::vector<uint8_t>(4096, 0x5A));
  EXPECT_EQ(table_->host_free(backend_, host), XAL_SUCCESS);
  EXPECT_EQ(table_->host_free(backend_, host), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
}

// A re-record whose barrier the driver refuses, after the native event was
// reset for it, leaves an event that nothing would ever signal: it must
// then read as never recorded (waits on it return at once), not hang
// every wait on it (bounded here by the sync timeout).
TEST_F(ZeErrors, ARefusedReRecordLeavesAnEventThatWaitsDoNotHangOn) {
  xaltest::ScopedEnv timeout("XAL_LEVELZERO_SYNC_TIMEOUT_MS", "2000");
  restart();
  if (HasFatalFailure()) return;
  auto* signal_every_event = simulator_hook<void()>("xalsim_ze_signal_every_event");
  ASSERT_NE(signal_every_event, nullptr);
  xal_bevent_t* event = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &event), XAL_SUCCESS);
  xal_bstream_t* other = nullptr;
  ASSERT_EQ(table_->stream_create(dev1_, 0, &other), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(event, stream_), XAL_SUCCESS);
  ASSERT_EQ(table_->event_synchronize(event), XAL_SUCCESS);
  setenv("XALSIM_ZE_FAIL", "zeCommandListAppendBarrier=0x7ffffffe@1", 1);
  EXPECT_EQ(table_->event_record(event, stream_), XAL_ERROR_BACKEND);
  unsetenv("XALSIM_ZE_FAIL");
  EXPECT_EQ(last_error().vendor_name, "ZE_RESULT_ERROR_UNKNOWN");
  EXPECT_EQ(table_->event_synchronize(event), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(table_->event_query(event), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_wait_event(other, event), XAL_SUCCESS);
  const xal_status_t waited = table_->stream_synchronize(other);
  EXPECT_EQ(waited, XAL_SUCCESS) << last_error().message;
  if (waited != XAL_SUCCESS) signal_every_event();  // lets the stuck list end
  // The event records again.
  ASSERT_EQ(table_->event_record(event, stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->event_synchronize(event), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(other), XAL_SUCCESS);
  EXPECT_EQ(table_->event_destroy(event), XAL_SUCCESS);
}

// host_free releases the memory whatever the driver says (xal_backend.h):
// a refused free is reported, the pointer is no longer an allocation, and
// it does not keep a lost context retired at the reset.
TEST_F(ZeErrors, ARefusedHostFreeStillReleasesTheMemory) {
  auto* live_objects = simulator_hook<int(int)>("xalsim_ze_live_objects");
  ASSERT_NE(live_objects, nullptr);
  const int contexts = live_objects(0);
  void* host = nullptr;
  ASSERT_EQ(table_->host_alloc(backend_, 4096, 0, &host), XAL_SUCCESS);
  setenv("XALSIM_ZE_FAIL", "zeMemFree=0x7ffffffe@1", 1);
  EXPECT_EQ(table_->host_free(backend_, host), XAL_ERROR_BACKEND);
  unsetenv("XALSIM_ZE_FAIL");
  EXPECT_EQ(last_error().vendor_name, "ZE_RESULT_ERROR_UNKNOWN");
  // Lose the context and reset: nothing holds the old context any more.
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 64, &a), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream_, a, 0, 64), XAL_SUCCESS);
  setenv("XALSIM_ZE_FAIL", "zeEventHostSynchronize=0x70000001@1", 1);
  EXPECT_EQ(table_->stream_synchronize(stream_), XAL_ERROR_DEVICE_LOST);
  unsetenv("XALSIM_ZE_FAIL");
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  EXPECT_EQ(live_objects(0), contexts);  // replaced, not retired
  EXPECT_EQ(table_->host_free(backend_, host), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->stream_destroy(stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_create(dev0_, 0, &stream_), XAL_SUCCESS);
}

// A staged peer copy's temporary stream whose destroy is refused (its
// fence refused) is not left for good: the next device_synchronize of its
// device fences it and destroys it.
TEST_F(ZeErrors, ARefusedDestroyOfAStagedCopysStreamIsDoneByTheNextSynchronize) {
  xaltest::ScopedEnv no_peer("XALSIM_ZE_NO_PEER", "1");
  auto* live_objects = simulator_hook<int(int)>("xalsim_ze_live_objects");
  ASSERT_NE(live_objects, nullptr);
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 64, &a), XAL_SUCCESS);
  ASSERT_EQ(table_->mem_alloc(dev1_, 64, &b), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  const int lists = live_objects(1);
  // Barrier 1 fences stream_ (the source); 2 fences the temporary stream of
  // dev1_, and 3 is its destroy's fence.
  setenv("XALSIM_ZE_FAIL", "zeCommandListAppendBarrier=0x7ffffffe@2+", 1);
  EXPECT_EQ(table_->memcpy_peer(stream_, dev1_, b, dev0_, a, 64), XAL_ERROR_BACKEND);
  unsetenv("XALSIM_ZE_FAIL");
  EXPECT_EQ(table_->device_synchronize(dev1_), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(live_objects(1), lists);
  // Copies still work.
  ASSERT_EQ(table_->memcpy_peer(stream_, dev1_, b, dev0_, a, 64), XAL_SUCCESS);
  EXPECT_EQ(table_->device_synchronize(dev1_), XAL_SUCCESS);
  EXPECT_EQ(live_objects(1), lists);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev1_, b), XAL_SUCCESS);
}

TEST(ZeUnavailable, BadLibraryPathGivesDlerrorText) {
  setenv("XAL_LEVELZERO_LIBRARY", "/nonexistent/libze_loader.so.1", 1);
  last_error() = ErrorDetail{};
  EXPECT_EQ(init_expecting_failure(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(last_error().message.find("/nonexistent/libze_loader.so.1"), std::string::npos);
  EXPECT_NE(last_error().message.find("No such file"), std::string::npos)
      << last_error().message;
}

TEST(ZeUnavailable, LoaderLackingARequiredFunctionIsNamed) {
  setenv("XAL_LEVELZERO_LIBRARY", XAL_ZE_SIM_INCOMPLETE_PATH, 1);
  EXPECT_EQ(init_expecting_failure(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(last_error().message.find("zeCommandListAppendMemoryFill"), std::string::npos)
      << last_error().message;
}

TEST(ZeUnavailable, NoDevices) {
  setenv("XAL_LEVELZERO_LIBRARY", XAL_ZE_SIM_PATH, 1);
  setenv("XALSIM_ZE_DEVICES", "0", 1);
  EXPECT_EQ(init_expecting_failure(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(last_error().message.find("no devices"), std::string::npos)
      << last_error().message;
  setenv("XALSIM_ZE_DEVICES", "2", 1);
}

TEST(ZeUnavailable, FailingInitKeepsTheCode) {
  setenv("XAL_LEVELZERO_LIBRARY", XAL_ZE_SIM_PATH, 1);
  setenv("XALSIM_ZE_FAIL", "zeInit=0x70020000", 1);
  EXPECT_EQ(init_expecting_failure(), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(last_error().vendor_code, 0x70020000);
  EXPECT_EQ(last_error().vendor_name, "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE");
  unsetenv("XALSIM_ZE_FAIL");
}

// A driver that fails at init is left out, named in describe's note; the
// other driver's devices still serve.
TEST(ZeUnavailable, AFailingDriverIsLeftOut) {
  xaltest::ScopedEnv library("XAL_LEVELZERO_LIBRARY", XAL_ZE_SIM_PATH);
  xaltest::ScopedEnv devices("XALSIM_ZE_DEVICES", "2");
  xaltest::ScopedEnv drivers("XALSIM_ZE_DRIVERS", "2");
  xaltest::ScopedEnv fail("XALSIM_ZE_FAIL", "zeContextCreate=0x70000002@2");
  const xal_backend_table_t* table = plugin_table();
  xal_backend_init_args_t args{sizeof args, test_services(), nullptr};
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(table->init(&args, &backend), XAL_SUCCESS) << last_error().message;
  uint32_t count = 0;
  ASSERT_EQ(table->device_count(backend, &count), XAL_SUCCESS);
  EXPECT_EQ(count, 1u);
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(table->describe(backend, &d), XAL_SUCCESS);
  EXPECT_NE(std::string(d.note).find("driver 1 skipped: zeContextCreate failed: "
                                     "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY"),
            std::string::npos)
      << d.note;
  xal_bdevice_t* device = nullptr;
  ASSERT_EQ(table->device_get(backend, 0, &device), XAL_SUCCESS);
  xal_devptr_t ptr = 0;
  EXPECT_EQ(table->mem_alloc(device, 64, &ptr), XAL_SUCCESS);
  EXPECT_EQ(table->mem_free(device, ptr), XAL_SUCCESS);
  EXPECT_EQ(table->shutdown(backend), XAL_SUCCESS);
}

TEST(ZeStatusMap, KnownAndUnknownCodes) {
  EXPECT_EQ(map_status(ZE_RESULT_SUCCESS).status, XAL_SUCCESS);
  EXPECT_EQ(map_status(ZE_RESULT_NOT_READY).status, XAL_NOT_READY);
  EXPECT_TRUE(map_status(ZE_RESULT_ERROR_DEVICE_LOST).sticky);
  EXPECT_STREQ(map_status(ZE_RESULT_ERROR_DEVICE_LOST).name, "ZE_RESULT_ERROR_DEVICE_LOST");
  EXPECT_FALSE(map_status(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY).sticky);
  for (int64_t code = 0x78000001; code <= 0x7800001b; ++code) {
    const StatusMapping m = map_status(code);
    EXPECT_NE(m.status, XAL_SUCCESS) << code;
    EXPECT_TRUE(std::string(m.name).starts_with("ZE_RESULT_")) << code;
    EXPECT_STRNE(m.name, "ZE_RESULT_UNRECOGNIZED") << code;
  }
  EXPECT_STREQ(map_status(0x7abcdef).name, "ZE_RESULT_UNRECOGNIZED");
}

}  // namespace
}  // namespace xal::levelzero::testing
