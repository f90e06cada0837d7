// ABI 1.1 interop of the Level Zero backend through libxal, on the
// simulated loader: USM and immediate command lists made with Level Zero
// directly, in a context of the test's own ("as a framework would"),
// imported, used by xal and read back through Level Zero; IPC handles
// between two processes; every bad input with its status.
#include <dlfcn.h>
#include <level_zero/ze_api.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "xal/xal.h"
#include "xaltest/interop.h"

namespace {

using xaltest::xal_error;

#define ASSERT_OK XALTEST_ASSERT_OK
#define EXPECT_OK XALTEST_EXPECT_OK
#define EXPECT_STATUS XALTEST_EXPECT_STATUS

constexpr ze_command_queue_flags_t kInOrder = 1u << 1;  // Level Zero 1.7

// The simulated loader the backend opened, called directly.
struct Ze {
  decltype(&zeDriverGet) DriverGet;
  decltype(&zeDeviceGet) DeviceGet;
  decltype(&zeContextCreate) ContextCreate;
  decltype(&zeContextDestroy) ContextDestroy;
  decltype(&zeMemAllocDevice) MemAllocDevice;
  decltype(&zeMemAllocShared) MemAllocShared;
  decltype(&zeMemAllocHost) MemAllocHost;
  decltype(&zeMemFree) MemFree;
  decltype(&zeCommandListCreate) CommandListCreate;
  decltype(&zeCommandListCreateImmediate) CommandListCreateImmediate;
  decltype(&zeCommandListDestroy) CommandListDestroy;
  decltype(&zeCommandListAppendMemoryCopy) CommandListAppendMemoryCopy;
  decltype(&zeCommandListAppendMemoryFill) CommandListAppendMemoryFill;

  explicit Ze(void* lib) {
    auto get = [lib](const char* name) {
      void* f = dlsym(lib, name);
      EXPECT_NE(f, nullptr) << name;
      return f;
    };
#define XAL_ZE_GET(field) field = reinterpret_cast<decltype(field)>(get("ze" #field))
    XAL_ZE_GET(DriverGet);
    XAL_ZE_GET(DeviceGet);
    XAL_ZE_GET(ContextCreate);
    XAL_ZE_GET(ContextDestroy);
    XAL_ZE_GET(MemAllocDevice);
    XAL_ZE_GET(MemAllocShared);
    XAL_ZE_GET(MemAllocHost);
    XAL_ZE_GET(MemFree);
    // Only the simulator with the interop calls has regular lists.
    CommandListCreate = reinterpret_cast<decltype(CommandListCreate)>(
        dlsym(lib, "zeCommandListCreate"));
    XAL_ZE_GET(CommandListCreateImmediate);
    XAL_ZE_GET(CommandListDestroy);
    XAL_ZE_GET(CommandListAppendMemoryCopy);
    XAL_ZE_GET(CommandListAppendMemoryFill);
#undef XAL_ZE_GET
  }
};

class ZeInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("XAL_BACKENDS", "levelzero", 1);
    setenv("XAL_LEVELZERO_LIBRARY", library(), 1);
    setenv("XALSIM_ZE_DEVICES", "2", 1);
    ASSERT_OK(xal_init(nullptr));
    ASSERT_OK(xal_device_get(0, &dev0));
    ASSERT_OK(xal_device_get(1, &dev1));
    ASSERT_OK(xal_stream_create(dev0, 0, &s0));
    lib_ = dlopen(library(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(lib_, nullptr) << dlerror();
    ze = std::make_unique<Ze>(lib_);
    uint32_t count = 1;
    ASSERT_EQ(ze->DriverGet(&count, &driver_), ZE_RESULT_SUCCESS);
    count = 2;
    ASSERT_EQ(ze->DeviceGet(driver_, &count, zdev), ZE_RESULT_SUCCESS);
    ASSERT_EQ(count, 2u);
    // The framework's own context, not xal's.
    ze_context_desc_t desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ASSERT_EQ(ze->ContextCreate(driver_, &desc, &ctx), ZE_RESULT_SUCCESS);
  }
  void TearDown() override {
    if (ze) {
      for (void* p : native_) EXPECT_EQ(ze->MemFree(ctx, p), ZE_RESULT_SUCCESS);
      if (ctx != nullptr) {
        EXPECT_EQ(ze->ContextDestroy(ctx), ZE_RESULT_SUCCESS);
      }
    }
    EXPECT_OK(xal_shutdown());
    // The simulated library stays loaded (no dlclose): what it holds stays
    // reachable, as a driver's does, for the leak check at exit.
    setenv("XAL_LEVELZERO_LIBRARY", XAL_ZE_SIM_PATH, 1);
  }
  virtual const char* library() const { return XAL_ZE_SIM_PATH; }

  // Device USM on device `index`, freed at the end of the test.
  void* device_alloc(int index, size_t bytes) {
    ze_device_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
    void* p = nullptr;
    EXPECT_EQ(ze->MemAllocDevice(ctx, &desc, bytes, 256, zdev[index], &p), ZE_RESULT_SUCCESS);
    native_.push_back(p);
    return p;
  }
  ze_command_list_handle_t immediate_list(int index, bool in_order) {
    ze_command_queue_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                 nullptr,
                                 1,
                                 0,
                                 in_order ? kInOrder : 0,
                                 ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                 ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list = nullptr;
    EXPECT_EQ(ze->CommandListCreateImmediate(ctx, zdev[index], &desc, &list),
              ZE_RESULT_SUCCESS);
    return list;
  }
  // A copy through Level Zero, finished when it returns (the simulator's
  // zeCommandListDestroy runs what the list holds).
  void ze_copy(void* dst, const void* src, size_t bytes) {
    ze_command_list_handle_t list = immediate_list(0, true);
    ASSERT_EQ(ze->CommandListAppendMemoryCopy(list, dst, src, bytes, nullptr, 0, nullptr),
              ZE_RESULT_SUCCESS);
    ASSERT_EQ(ze->CommandListDestroy(list), ZE_RESULT_SUCCESS);
  }
  static uint64_t as_native(const void* p) { return reinterpret_cast<uint64_t>(p); }

  xal_device_t dev0 = nullptr, dev1 = nullptr;
  xal_stream_t s0 = nullptr;
  std::unique_ptr<Ze> ze;
  ze_device_handle_t zdev[2] = {};
  ze_context_handle_t ctx = nullptr;

 private:
  void* lib_ = nullptr;
  ze_driver_handle_t driver_ = nullptr;
  std::vector<void*> native_;
};

TEST_F(ZeInterop, DevicesAdvertiseWhatTheLoaderHas) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_OK(xal_device_get_properties(dev0, &p));
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_MEM_IMPORT);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_IPC);
  EXPECT_FALSE(p.capabilities & XAL_DEVICE_CAP_HOST_POINTERS);
}

TEST_F(ZeInterop, ImportedDeviceAndSharedMemoryAreUsedInPlace) {
  const size_t n = 8192;
  void* native = device_alloc(0, n);
  xal_devptr_t p = 0;
  ASSERT_OK(xal_mem_import(dev0, as_native(native), n, 0, &p));
  EXPECT_EQ(p, as_native(native));
  std::vector<uint8_t> in(n), out(n, 0);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint8_t>(i * 13 + 5);
  ASSERT_OK(xal_memcpy_htod(s0, p, in.data(), n));
  ASSERT_OK(xal_memset(s0, p + 100, 0xab, 50));
  xal_devptr_t owned = 0;
  ASSERT_OK(xal_mem_alloc(dev0, n, &owned));
  ASSERT_OK(xal_memcpy_dtod(s0, owned, p, n));
  ASSERT_OK(xal_memcpy_dtod(s0, p + 4096, owned, 64));
  ASSERT_OK(xal_stream_synchronize(s0));
  for (size_t i = 100; i < 150; ++i) in[i] = 0xab;
  for (size_t i = 0; i < 64; ++i) in[4096 + i] = in[i];
  ze_copy(out.data(), native, n);
  EXPECT_EQ(in, out);
  EXPECT_STATUS(xal_memcpy_dtoh(s0, out.data(), p + 1, n), XAL_ERROR_OUT_OF_BOUNDS);
  ASSERT_OK(xal_mem_free(dev0, p));
  EXPECT_STATUS(xal_mem_free(dev0, p), XAL_ERROR_INVALID_ARGUMENT);
  std::vector<uint8_t> again(n, 0);
  ze_copy(again.data(), native, n);
  EXPECT_EQ(again, in);
  ASSERT_OK(xal_mem_free(dev0, owned));
  // Shared USM of the device, and part of an allocation.
  ze_device_mem_alloc_desc_t ddesc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
  ze_host_mem_alloc_desc_t hdesc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  void* shared = nullptr;
  ASSERT_EQ(ze->MemAllocShared(ctx, &ddesc, &hdesc, 4096, 256, zdev[0], &shared),
            ZE_RESULT_SUCCESS);
  ASSERT_OK(xal_mem_import(dev0, as_native(shared) + 1024, 1024, 0, &p));
  ASSERT_OK(xal_memset(s0, p, 0x11, 1024));
  ASSERT_OK(xal_stream_synchronize(s0));
  const auto* bytes = static_cast<const uint8_t*>(shared);  // host-visible
  EXPECT_EQ(bytes[1023], 0);
  EXPECT_EQ(bytes[1024], 0x11);
  EXPECT_EQ(bytes[2047], 0x11);
  EXPECT_EQ(bytes[2048], 0);
  ASSERT_OK(xal_mem_free(dev0, p));
  EXPECT_EQ(ze->MemFree(ctx, shared), ZE_RESULT_SUCCESS);
}

TEST_F(ZeInterop, ImportRefusesWhatIsNotTheDevicesMemory) {
  void* native = device_alloc(0, 4096);
  void* other = device_alloc(1, 4096);
  xal_devptr_t p = 0;
  EXPECT_STATUS(xal_mem_import(nullptr, as_native(native), 16, 0, &p), XAL_ERROR_INVALID_HANDLE);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native), 16, 0, nullptr),
                XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev0, 0, 16, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native), 0, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native), 16, 0x80, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  // Memory the driver does not know, with the host flag or without.
  std::vector<uint8_t> host(4096);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(host.data()), 16, 0, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("not USM of this driver"), std::string::npos)
      << xal_error().message;
  EXPECT_STATUS(xal_mem_import(dev0, as_native(host.data()), 16, XAL_MEM_IMPORT_HOST, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  // Host USM is not device memory.
  ze_host_mem_alloc_desc_t hdesc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  void* host_usm = nullptr;
  ASSERT_EQ(ze->MemAllocHost(ctx, &hdesc, 4096, 64, &host_usm), ZE_RESULT_SUCCESS);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(host_usm), 16, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("host USM"), std::string::npos)
      << xal_error().message;
  EXPECT_EQ(ze->MemFree(ctx, host_usm), ZE_RESULT_SUCCESS);
  // Another device's memory.
  EXPECT_STATUS(xal_mem_import(dev0, as_native(other), 4096, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("of another device"), std::string::npos)
      << xal_error().message;
  ASSERT_OK(xal_mem_import(dev1, as_native(other), 4096, 0, &p));
  ASSERT_OK(xal_mem_free(dev1, p));
  // Past the end of its allocation, or of memory.
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native) + 16, 4096, 0, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("runs past its allocation"), std::string::npos)
      << xal_error().message;
  EXPECT_STATUS(xal_mem_import(dev0, ~uint64_t{0} - 8, 64, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  // An unmapped address and freed memory.
  EXPECT_STATUS(xal_mem_import(dev0, 0x1000, 4096, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  ze_device_mem_alloc_desc_t ddesc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
  void* freed = nullptr;
  ASSERT_EQ(ze->MemAllocDevice(ctx, &ddesc, 4096, 256, zdev[0], &freed), ZE_RESULT_SUCCESS);
  ASSERT_EQ(ze->MemFree(ctx, freed), ZE_RESULT_SUCCESS);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(freed), 4096, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  // Overlap with a live import and with xal's own memory; double free.
  ASSERT_OK(xal_mem_import(dev0, as_native(native), 4096, 0, &p));
  xal_devptr_t q = 0;
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native) + 100, 16, 0, &q),
                XAL_ERROR_INVALID_ARGUMENT);
  xal_devptr_t owned = 0;
  ASSERT_OK(xal_mem_alloc(dev0, 4096, &owned));
  EXPECT_STATUS(xal_mem_import(dev0, owned + 256, 16, 0, &q), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_free(dev1, p), XAL_ERROR_INVALID_ARGUMENT);
  xal_ipc_handle_t h{};
  EXPECT_STATUS(xal_mem_get_ipc_handle(dev0, p, &h), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(xal_mem_free(dev0, p));
  EXPECT_STATUS(xal_mem_free(dev0, p), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(xal_mem_free(dev0, owned));
}

// The owner's fill, then xal's read, on a list with no in-order flag: the
// simulator holds such a list's commands until a barrier and runs them
// last first, so the read sees the fill only if xal orders it after.
TEST_F(ZeInterop, AnImportedListOrdersXalsWorkAfterTheOwnersWork) {
  for (bool in_order : {false, true}) {
    SCOPED_TRACE(in_order ? "in-order list" : "list without the in-order flag");
    const size_t n = 4096;
    void* native = device_alloc(0, n);
    ze_command_list_handle_t list = immediate_list(0, in_order);
    xal_stream_t imported = nullptr;
    ASSERT_OK(xal_stream_import(dev0, as_native(list), 0, &imported));
    xal_devptr_t p = 0;
    ASSERT_OK(xal_mem_import(dev0, as_native(native), n, 0, &p));
    const uint8_t value = 0x5a;
    ASSERT_EQ(ze->CommandListAppendMemoryFill(list, native, &value, 1, n, nullptr, 0, nullptr),
              ZE_RESULT_SUCCESS);
    std::vector<uint8_t> out(n, 0);
    ASSERT_OK(xal_memcpy_dtoh(imported, out.data(), p, n));
    ASSERT_OK(xal_memset(imported, p, 0x11, 16));
    ASSERT_OK(xal_stream_synchronize(imported));
    EXPECT_EQ(out, std::vector<uint8_t>(n, 0x5a));
    // Events work on it as on any stream.
    xal_event_t e = nullptr;
    ASSERT_OK(xal_event_create(dev0, 0, &e));
    ASSERT_OK(xal_event_record(e, imported));
    ASSERT_OK(xal_stream_wait_event(s0, e));
    ASSERT_OK(xal_event_synchronize(e));
    ASSERT_OK(xal_event_destroy(e));
    // Destroying xal's stream leaves the owner's list usable.
    ASSERT_OK(xal_stream_destroy(imported));
    EXPECT_STATUS(xal_stream_synchronize(imported), XAL_ERROR_INVALID_HANDLE);
    const uint8_t two = 0x22;
    ASSERT_EQ(ze->CommandListAppendMemoryFill(list, native, &two, 1, 8, nullptr, 0, nullptr),
              ZE_RESULT_SUCCESS);
    ASSERT_EQ(ze->CommandListDestroy(list), ZE_RESULT_SUCCESS);
    ze_copy(out.data(), native, 32);
    EXPECT_EQ(out[0], 0x22);
    EXPECT_EQ(out[8], 0x11);
    EXPECT_EQ(out[16], 0x5a);
    ASSERT_OK(xal_mem_free(dev0, p));
  }
}

TEST_F(ZeInterop, StreamImportRefusesBadLists) {
  xal_stream_t s = nullptr;
  EXPECT_STATUS(xal_stream_import(dev0, 0, 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_stream_import(dev0, 0x1234, 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_stream_import(nullptr, 0x1234, 0, &s), XAL_ERROR_INVALID_HANDLE);
  // Not a list: refused with the driver's code.
  EXPECT_STATUS(xal_stream_import(dev0, 0x1234, 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(xal_error().vendor_code, ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_NE(std::string(xal_error().message).find("not a live command list"), std::string::npos)
      << xal_error().message;
  // A regular list is not a stream.
  ze_command_list_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 1, 0};
  ze_command_list_handle_t regular = nullptr;
  ASSERT_EQ(ze->CommandListCreate(ctx, zdev[0], &desc, &regular), ZE_RESULT_SUCCESS);
  EXPECT_STATUS(xal_stream_import(dev0, as_native(regular), 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("regular command list"), std::string::npos)
      << xal_error().message;
  ASSERT_EQ(ze->CommandListDestroy(regular), ZE_RESULT_SUCCESS);
  // A list of another device, unknown flags, a destroyed list.
  ze_command_list_handle_t other = immediate_list(1, true);
  EXPECT_STATUS(xal_stream_import(dev0, as_native(other), 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("list of another device"), std::string::npos)
      << xal_error().message;
  EXPECT_STATUS(xal_stream_import(dev1, as_native(other), 7, &s), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(ze->CommandListDestroy(other), ZE_RESULT_SUCCESS);
  EXPECT_STATUS(xal_stream_import(dev1, as_native(other), 0, &s), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_F(ZeInterop, AnotherProcessWritesThroughAnIpcHandle) {
  xaltest::ipc_export_to_a_child(dev0, s0, XAL_IPC_PEER);
}

TEST_F(ZeInterop, OpenedMemoryIsTheExportersAndEndsWithIt) {
  xaltest::ipc_open_from_a_child(dev0, dev1, XAL_IPC_PEER, ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST_F(ZeInterop, AKilledExporterMakesTheNextCallFail) {
  xaltest::ipc_exporter_killed(dev0, s0, XAL_IPC_PEER);
}

// A loader without the interop calls: NOT_SUPPORTED, never a crash, and the
// devices do not claim the features.
class ZeWithoutInterop : public ZeInterop {
 protected:
  const char* library() const override { return XAL_ZE_SIM_NO_INTEROP_PATH; }
};

TEST_F(ZeWithoutInterop, ReportsNotSupported) {
  xal_device_properties_t props{};
  props.struct_size = sizeof props;
  ASSERT_OK(xal_device_get_properties(dev0, &props));
  EXPECT_FALSE(props.capabilities & XAL_DEVICE_CAP_MEM_IMPORT);
  EXPECT_FALSE(props.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT);
  EXPECT_FALSE(props.capabilities & XAL_DEVICE_CAP_IPC);
  void* native = device_alloc(0, 256);
  xal_devptr_t p = 0;
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native), 256, 0, &p), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(xal_error().message).find("zeMemGetAllocProperties"), std::string::npos)
      << xal_error().message;
  ze_command_list_handle_t list = immediate_list(0, true);
  xal_stream_t s = nullptr;
  EXPECT_STATUS(xal_stream_import(dev0, as_native(list), 0, &s), XAL_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(ze->CommandListDestroy(list), ZE_RESULT_SUCCESS);
  xal_devptr_t q = 0;
  ASSERT_OK(xal_mem_alloc(dev0, 256, &q));
  xal_ipc_handle_t h{};
  EXPECT_STATUS(xal_mem_get_ipc_handle(dev0, q, &h), XAL_ERROR_NOT_SUPPORTED);
  ASSERT_OK(xal_mem_free(dev0, q));
}

}  // namespace
