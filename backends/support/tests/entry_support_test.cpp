// The shared pieces of the backends' entries: the exception barrier with an
// entry context, and the checks the HIP and Level Zero entries share.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "xalsupport/copy_entries.h"
#include "xalsupport/device_checks.h"
#include "xalsupport/guarded.h"
#include "xalsupport/interop_entries.h"
#include "xalsupport/module_entries.h"
#include "xalsupport/report.h"
#include "xalsupport/sticky_error.h"

// The plugin's opaque device, defined by each backend; here a test's own.
struct xal_bdevice_s {
  int id = 0;
};

namespace xal::support {
namespace {

std::vector<std::string> g_messages;

xal_status_t record(xal_status_t status, int64_t, const char*, const char* message) {
  g_messages.emplace_back(message != nullptr ? message : "");
  return status;
}

const xal_backend_services_t kServices = {
    sizeof(xal_backend_services_t), XAL_ABI_VERSION, record, nullptr, nullptr, nullptr};

class EntrySupport : public ::testing::Test {
 protected:
  void SetUp() override {
    g_messages.clear();
    set_services(&kServices);
  }
  void TearDown() override { set_services(nullptr); }
};

// An entry context that keeps what it was handed and counts its lifetime.
struct Probe {
  explicit Probe(int* counter) : live(counter) { ++*live; }
  ~Probe() { --*live; }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;
  // Copies what it is handed: the exception's message ends with the catch.
  xal_status_t fail(const Caught& caught) const {
    seen = caught;
    what = caught.what != nullptr ? caught.what : "(null)";
    operation = caught.operation != nullptr ? caught.operation : "(null)";
    return XAL_ERROR_BACKEND;
  }
  int* live;
  mutable Caught seen{Caught::Kind::kUnknown, XAL_SUCCESS, nullptr, nullptr};
  mutable std::string what;
  mutable std::string operation;
};

TEST_F(EntrySupport, GuardedHandsWhatItCaughtToTheEntry) {
  int live = 0;
  Probe probe(&live);
  EXPECT_EQ(guarded(probe, "op", [] { return XAL_NOT_READY; }), XAL_NOT_READY);
  EXPECT_EQ(probe.seen.status, XAL_SUCCESS);

  EXPECT_EQ(guarded(probe, "op",
                    []() -> xal_status_t {
                      throw StatusError(XAL_ERROR_INVALID_ARGUMENT, "bad size");
                    }),
            XAL_ERROR_BACKEND);
  EXPECT_EQ(probe.seen.kind, Caught::Kind::kStatusError);
  EXPECT_EQ(probe.seen.status, XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(probe.what, "bad size");
  EXPECT_EQ(probe.operation, "op");

  (void)guarded(probe, "op", []() -> xal_status_t { throw std::bad_alloc(); });
  EXPECT_EQ(probe.seen.kind, Caught::Kind::kOutOfHostMemory);
  EXPECT_EQ(probe.seen.status, XAL_ERROR_OUT_OF_HOST_MEMORY);
  EXPECT_EQ(probe.what, "(null)");

  (void)guarded(probe, "op", []() -> xal_status_t { throw std::logic_error("oops"); });
  EXPECT_EQ(probe.seen.kind, Caught::Kind::kException);
  EXPECT_EQ(probe.seen.status, XAL_ERROR_INTERNAL);
  EXPECT_EQ(probe.what, "oops");

  (void)guarded(probe, "op", []() -> xal_status_t { throw 7; });
  EXPECT_EQ(probe.seen.kind, Caught::Kind::kUnknown);
  EXPECT_EQ(probe.seen.status, XAL_ERROR_INTERNAL);
  EXPECT_EQ(probe.what, "(null)");
}

TEST_F(EntrySupport, AContextMadeInTheCallLastsUntilItReturns) {
  int live = 0;
  auto body = [&] { return live == 1 ? XAL_SUCCESS : XAL_ERROR_INTERNAL; };
  EXPECT_EQ(guarded(Probe(&live), "op", body), XAL_SUCCESS);
  EXPECT_EQ(live, 0);
}

TEST_F(EntrySupport, AThrowingEntryGivesTheBareStatus) {
  struct Throwing {
    xal_status_t fail(const Caught&) const { throw std::runtime_error("no"); }
  };
  EXPECT_EQ(guarded(Throwing{}, "op",
                    []() -> xal_status_t { throw StatusError(XAL_ERROR_TIMEOUT, "late"); }),
            XAL_ERROR_TIMEOUT);
}

TEST_F(EntrySupport, ReportedEntryNamesTheOperation) {
  EXPECT_EQ(guarded(ReportedEntry{}, "hip mem_alloc",
                    []() -> xal_status_t { throw std::runtime_error("bad"); }),
            XAL_ERROR_INTERNAL);
  ASSERT_EQ(g_messages.size(), 1u);
  EXPECT_EQ(g_messages[0], "hip mem_alloc: bad");
}

TEST_F(EntrySupport, ModuleImageAndLaunchArguments) {
  const char image[] = "x";
  EXPECT_EQ(check_module_image(1, 1, "loads only this", image, sizeof image), XAL_SUCCESS);
  EXPECT_EQ(check_module_image(2, 1, "the backend loads one format only", image, sizeof image),
            XAL_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(check_module_image(1, 1, "unused", nullptr, 4), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(check_module_image(1, 1, "unused", image, 0), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(g_messages.size(), 3u);
  EXPECT_EQ(g_messages[0], "the backend loads one format only (format 2 given)");
  EXPECT_EQ(g_messages[1], "module_load: empty image");

  xal_launch_config_t config{};
  void* arg = nullptr;
  EXPECT_EQ(check_launch_arguments(&config, &arg, 1), XAL_SUCCESS);
  EXPECT_EQ(check_launch_arguments(&config, nullptr, 0), XAL_SUCCESS);
  EXPECT_EQ(check_launch_arguments(nullptr, &arg, 1), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(check_launch_arguments(&config, nullptr, 2), XAL_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace xal::support

// A module's kernels, as the backends keep them.
struct xal_bkernel_s {
  std::string name;
  int handle = 0;
};

namespace xal::support {
namespace {

struct FakeModule {
  std::mutex mutex;
  std::vector<std::unique_ptr<xal_bkernel_s>> kernels;
};

TEST_F(EntrySupport, KernelsAreMadeOncePerName) {
  FakeModule module;
  int made = 0;
  auto create = [&](xal_bkernel_s& kernel) {
    kernel.handle = ++made;
    return kernel.name == "missing" ? XAL_ERROR_BACKEND : XAL_SUCCESS;
  };
  xal_bkernel_t* first = nullptr;
  xal_bkernel_t* again = nullptr;
  ASSERT_EQ(find_or_add_kernel(module, "axpy", create, &first), XAL_SUCCESS);
  ASSERT_EQ(find_or_add_kernel(module, "axpy", create, &again), XAL_SUCCESS);
  EXPECT_EQ(first, again);
  EXPECT_EQ(made, 1);
  xal_bkernel_t* none = nullptr;
  EXPECT_EQ(find_or_add_kernel(module, "missing", create, &none), XAL_ERROR_BACKEND);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(module.kernels.size(), 1u);
}

TEST_F(EntrySupport, ImportsAndIpcMappings) {
  xal_devptr_t out = 0;
  EXPECT_EQ(accept_import(0x1010, 0x10, 0x1000, 0x20, "mem_import: 0x1010", &out), XAL_SUCCESS);
  EXPECT_EQ(out, 0x1010u);
  out = 0;
  EXPECT_EQ(accept_import(0x1010, 0x11, 0x1000, 0x20, "mem_import: 0x1010", &out),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(out, 0u);
  EXPECT_EQ(accept_import(0x0ff0, 0x1, 0x1000, 0x20, "below", &out), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(g_messages.size(), 2u);
  EXPECT_EQ(g_messages[0],
            "mem_import: 0x1010 + 17 bytes runs past its allocation [0x1000, +32)");

  EXPECT_EQ(check_ipc_mapping(64, 64, "the driver"), XAL_SUCCESS);
  EXPECT_EQ(check_ipc_mapping(64, 32, "the driver"), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(g_messages.back(), "mem_ipc_open: the handle names 64 bytes, the driver mapped 32");
  EXPECT_EQ(report_lacks("the HIP runtime", "hipFoo"), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(g_messages.back(), "the HIP runtime lacks hipFoo");
}

struct FakeDevice {
  std::mutex mutex;
  StickyError sticky;
  uint64_t generation = 3;
};

TEST_F(EntrySupport, StickyErrorsAndGenerations) {
  FakeDevice device;
  EXPECT_EQ(check_sticky(device, "HIP device", 1), XAL_SUCCESS);
  EXPECT_EQ(check_generation(device, 3, "the stream", "HIP device", 1), XAL_SUCCESS);
  EXPECT_EQ(check_generation(device, 2, "the stream", "HIP device", 1),
            XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(g_messages.back(), "the stream was invalidated by a reset of HIP device 1");
  device.sticky.record(XAL_ERROR_DEVICE_LOST, 9, "LOST", "lost it");
  EXPECT_EQ(check_sticky(device, "Level Zero device", 0), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(g_messages.back(),
            "Level Zero device 0 has a sticky error (lost it); call xal_device_reset");
}

// The order of memcpy_peer's checks, through fake per-device checks.
std::vector<std::string> g_checked;
xal_status_t fake_sticky(xal_bdevice_s* device) {
  g_checked.push_back("sticky " + std::to_string(device->id));
  return device->id == 9 ? XAL_ERROR_DEVICE_LOST : XAL_SUCCESS;
}
xal_status_t fake_owner(const xal_bdevice_s* device, xal_devptr_t, size_t, const char* what) {
  g_checked.push_back(std::string("owner ") + std::to_string(device->id) + " " + what);
  return XAL_SUCCESS;
}

TEST_F(EntrySupport, PeerCopyChecksInOrder) {
  const PeerCopyChecks checks{fake_sticky, fake_owner};
  xal_bdevice_s a{1};
  xal_bdevice_s b{2};
  xal_bdevice_s other{3};
  g_checked.clear();
  EXPECT_EQ(check_peer_copy(checks, &other, &a, 0x10, &b, 0x20, 8), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(g_checked.empty());
  EXPECT_EQ(g_messages.back(), "memcpy_peer: the stream belongs to neither device");
  EXPECT_EQ(check_peer_copy(checks, &b, &a, 0x10, &b, 0x20, 8), XAL_SUCCESS);
  EXPECT_EQ(g_checked, (std::vector<std::string>{"sticky 1", "sticky 2", "owner 1 memcpy_peer",
                                                 "owner 2 memcpy_peer"}));
  xal_bdevice_s lost{9};
  g_checked.clear();
  EXPECT_EQ(check_peer_copy(checks, &a, &a, 0x10, &lost, 0x20, 8), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(g_checked, (std::vector<std::string>{"sticky 1", "sticky 9"}));
}

TEST_F(EntrySupport, IpcOwnerCheckPassesLiveMemory) {
  IpcOwners owners;
  EXPECT_EQ(check_ipc_owner(owners, 0x1000, 16, "memcpy_htod"), XAL_SUCCESS);
  EXPECT_TRUE(g_messages.empty());
}

}  // namespace
}  // namespace xal::support
