// ABI 1.1 interop of the HIP backend through libxal, on the simulated
// runtime: memory and streams made with the HIP API directly ("as a
// framework would"), imported, used by xal and read back through HIP; IPC
// handles between two processes; every bad input with its status.
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hip_api.h"
#include "xal/xal.h"
#include "xaltest/interop.h"

namespace {

using xaltest::xal_error;

#define ASSERT_OK XALTEST_ASSERT_OK
#define EXPECT_OK XALTEST_EXPECT_OK
#define EXPECT_STATUS XALTEST_EXPECT_STATUS

// The simulated runtime the backend loaded, called directly.
struct Hip {
  hipError_t (*SetDevice)(int);
  hipError_t (*Malloc)(void**, size_t);
  hipError_t (*Free)(void*);
  hipError_t (*HostMalloc)(void**, size_t, unsigned int);
  hipError_t (*HostFree)(void*);
  hipError_t (*MemcpyHtoDAsync)(hipDeviceptr_t, void*, size_t, hipStream_t);
  hipError_t (*MemcpyDtoHAsync)(void*, hipDeviceptr_t, size_t, hipStream_t);
  hipError_t (*MemsetD8Async)(hipDeviceptr_t, unsigned char, size_t, hipStream_t);
  hipError_t (*StreamCreateWithFlags)(hipStream_t*, unsigned int);
  hipError_t (*StreamDestroy)(hipStream_t);
  hipError_t (*StreamSynchronize)(hipStream_t);
  hipError_t (*LaunchHostFunc)(hipStream_t, hipHostFn_t, void*);

  explicit Hip(void* lib) {
    auto get = [lib](const char* name) {
      void* f = dlsym(lib, name);
      EXPECT_NE(f, nullptr) << name;
      return f;
    };
#define XAL_HIP_GET(field) \
  field = reinterpret_cast<decltype(field)>(get("hip" #field))
    XAL_HIP_GET(SetDevice);
    XAL_HIP_GET(Malloc);
    XAL_HIP_GET(Free);
    XAL_HIP_GET(HostMalloc);
    XAL_HIP_GET(HostFree);
    XAL_HIP_GET(MemcpyHtoDAsync);
    XAL_HIP_GET(MemcpyDtoHAsync);
    XAL_HIP_GET(MemsetD8Async);
    XAL_HIP_GET(StreamCreateWithFlags);
    XAL_HIP_GET(StreamDestroy);
    XAL_HIP_GET(StreamSynchronize);
    XAL_HIP_GET(LaunchHostFunc);
#undef XAL_HIP_GET
  }
};

class HipInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("XAL_BACKENDS", "hip", 1);
    setenv("XAL_HIP_LIBRARY", library(), 1);
    setenv("XALSIM_HIP_DEVICES", "2", 1);
    ASSERT_OK(xal_init(nullptr));
    ASSERT_OK(xal_device_get(0, &dev0));
    ASSERT_OK(xal_device_get(1, &dev1));
    ASSERT_OK(xal_stream_create(dev0, 0, &s0));
    // The runtime the backend opened (same path: the same library).
    lib_ = dlopen(library(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(lib_, nullptr) << dlerror();
    hip = std::make_unique<Hip>(lib_);
  }
  void TearDown() override {
    if (hip) {
      for (void* p : native_) EXPECT_EQ(hip->Free(p), hipSuccess);
    }
    EXPECT_OK(xal_shutdown());
    // The simulated library stays loaded (no dlclose): what it holds stays
    // reachable, as a driver's does, for the leak check at exit.
    setenv("XAL_HIP_LIBRARY", XAL_HIP_SIM_PATH, 1);
  }
  virtual const char* library() const { return XAL_HIP_SIM_PATH; }

  // hipMalloc on `ordinal`, freed at the end of the test.
  void* native_alloc(int ordinal, size_t bytes) {
    void* p = nullptr;
    EXPECT_EQ(hip->SetDevice(ordinal), hipSuccess);
    EXPECT_EQ(hip->Malloc(&p, bytes), hipSuccess);
    native_.push_back(p);
    return p;
  }
  static uint64_t as_native(const void* p) { return reinterpret_cast<uint64_t>(p); }

  xal_device_t dev0 = nullptr, dev1 = nullptr;
  xal_stream_t s0 = nullptr;
  std::unique_ptr<Hip> hip;

 private:
  void* lib_ = nullptr;
  std::vector<void*> native_;
};

TEST_F(HipInterop, DevicesAdvertiseWhatTheRuntimeHas) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_OK(xal_device_get_properties(dev0, &p));
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_MEM_IMPORT);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_IPC);
  EXPECT_FALSE(p.capabilities & XAL_DEVICE_CAP_HOST_POINTERS);
}

TEST_F(HipInterop, ImportedMemoryIsUsedInPlaceAndStaysTheOwners) {
  const size_t n = 8192;
  void* native = native_alloc(0, n);
  xal_devptr_t p = 0;
  ASSERT_OK(xal_mem_import(dev0, as_native(native), n, 0, &p));
  EXPECT_EQ(p, as_native(native));
  std::vector<uint8_t> in(n), out(n, 0);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint8_t>(i * 13 + 5);
  ASSERT_OK(xal_memcpy_htod(s0, p, in.data(), n));
  ASSERT_OK(xal_memset(s0, p + 100, 0xab, 50));
  // A device-to-device copy inside the import, and into xal's own memory.
  xal_devptr_t owned = 0;
  ASSERT_OK(xal_mem_alloc(dev0, n, &owned));
  ASSERT_OK(xal_memcpy_dtod(s0, owned, p, n));
  ASSERT_OK(xal_memcpy_dtod(s0, p + 4096, owned, 64));
  ASSERT_OK(xal_stream_synchronize(s0));
  for (size_t i = 100; i < 150; ++i) in[i] = 0xab;
  for (size_t i = 0; i < 64; ++i) in[4096 + i] = in[i];
  // Read back through the runtime.
  ASSERT_EQ(hip->MemcpyDtoHAsync(out.data(), native, n, nullptr), hipSuccess);
  ASSERT_EQ(hip->StreamSynchronize(nullptr), hipSuccess);
  EXPECT_EQ(in, out);
  // Bounds are the imported size.
  EXPECT_STATUS(xal_memcpy_dtoh(s0, out.data(), p + 1, n), XAL_ERROR_OUT_OF_BOUNDS);
  // Freeing forgets the import; the memory stays the owner's.
  ASSERT_OK(xal_mem_free(dev0, p));
  EXPECT_STATUS(xal_mem_free(dev0, p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_memcpy_dtoh(s0, out.data(), p, 16), XAL_ERROR_OUT_OF_BOUNDS);
  std::vector<uint8_t> again(n, 0);
  ASSERT_EQ(hip->MemcpyDtoHAsync(again.data(), native, n, nullptr), hipSuccess);
  EXPECT_EQ(again, in);
  // Part of an allocation can be imported too.
  ASSERT_OK(xal_mem_import(dev0, as_native(native) + 512, 1024, 0, &p));
  ASSERT_OK(xal_memset(s0, p, 0x11, 1024));
  ASSERT_OK(xal_stream_synchronize(s0));
  ASSERT_EQ(hip->MemcpyDtoHAsync(again.data(), native, n, nullptr), hipSuccess);
  EXPECT_EQ(again[511], in[511]);
  EXPECT_EQ(again[512], 0x11);
  EXPECT_EQ(again[1535], 0x11);
  EXPECT_EQ(again[1536], in[1536]);
  ASSERT_OK(xal_mem_free(dev0, p));
  ASSERT_OK(xal_mem_free(dev0, owned));
}

TEST_F(HipInterop, ImportRefusesWhatIsNotTheDevicesMemory) {
  void* native = native_alloc(0, 4096);
  void* other = native_alloc(1, 4096);
  xal_devptr_t p = 0;
  EXPECT_STATUS(xal_mem_import(nullptr, as_native(native), 16, 0, &p), XAL_ERROR_INVALID_HANDLE);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native), 16, 0, nullptr),
                XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev0, 0, 16, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native), 0, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native), 16, 0x80, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  // Host memory: the runtime does not know it (its code kept), with the
  // host flag or without.
  std::vector<uint8_t> host(4096);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(host.data()), 16, 0, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(xal_error().vendor_code, hipErrorInvalidValue);
  EXPECT_NE(std::string(xal_error().message).find("not memory of the HIP runtime"),
            std::string::npos)
      << xal_error().message;
  EXPECT_STATUS(xal_mem_import(dev0, as_native(host.data()), 16, XAL_MEM_IMPORT_HOST, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  // Page-locked host memory the runtime knows is still not device memory.
  void* pinned = nullptr;
  ASSERT_EQ(hip->HostMalloc(&pinned, 4096, 0), hipSuccess);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(pinned), 16, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("host memory"), std::string::npos)
      << xal_error().message;
  EXPECT_EQ(hip->HostFree(pinned), hipSuccess);
  // Another device's memory.
  EXPECT_STATUS(xal_mem_import(dev0, as_native(other), 4096, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("memory of HIP device 1"), std::string::npos)
      << xal_error().message;
  ASSERT_OK(xal_mem_import(dev1, as_native(other), 4096, 0, &p));
  ASSERT_OK(xal_mem_free(dev1, p));
  // A range past the end of its allocation, or past the end of memory.
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native) + 16, 4096, 0, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("runs past its allocation"), std::string::npos)
      << xal_error().message;
  EXPECT_STATUS(xal_mem_import(dev0, ~uint64_t{0} - 8, 64, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  // An unmapped address and freed memory: clear errors, no crash.
  EXPECT_STATUS(xal_mem_import(dev0, 0x1000, 4096, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  void* freed = nullptr;
  ASSERT_EQ(hip->SetDevice(0), hipSuccess);
  ASSERT_EQ(hip->Malloc(&freed, 4096), hipSuccess);
  ASSERT_EQ(hip->Free(freed), hipSuccess);
  EXPECT_STATUS(xal_mem_import(dev0, as_native(freed), 4096, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  // Overlap with a live import, and with xal's own memory.
  ASSERT_OK(xal_mem_import(dev0, as_native(native), 4096, 0, &p));
  xal_devptr_t q = 0;
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native) + 100, 16, 0, &q),
                XAL_ERROR_INVALID_ARGUMENT);
  xal_devptr_t owned = 0;
  ASSERT_OK(xal_mem_alloc(dev0, 4096, &owned));
  EXPECT_STATUS(xal_mem_import(dev0, owned + 256, 16, 0, &q), XAL_ERROR_INVALID_ARGUMENT);
  // Freed on the wrong device, then twice.
  EXPECT_STATUS(xal_mem_free(dev1, p), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(xal_mem_free(dev0, p));
  EXPECT_STATUS(xal_mem_free(dev0, p), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(xal_mem_free(dev0, owned));
  // Imported memory cannot be exported.
  ASSERT_OK(xal_mem_import(dev0, as_native(native), 4096, 0, &p));
  xal_ipc_handle_t h{};
  EXPECT_STATUS(xal_mem_get_ipc_handle(dev0, p, &h), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(xal_mem_free(dev0, p));
}

void sleep_50ms(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

TEST_F(HipInterop, AnImportedStreamOrdersXalsWorkAfterTheOwnersWork) {
  const size_t n = 4096;
  void* native = native_alloc(0, n);
  hipStream_t stream = nullptr;
  ASSERT_EQ(hip->SetDevice(0), hipSuccess);
  ASSERT_EQ(hip->StreamCreateWithFlags(&stream, 0), hipSuccess);
  xal_stream_t imported = nullptr;
  ASSERT_OK(xal_stream_import(dev0, as_native(stream), 0, &imported));
  xal_devptr_t p = 0;
  ASSERT_OK(xal_mem_import(dev0, as_native(native), n, 0, &p));
  // The owner's work: a slow host function, then a memset. xal's read on
  // the imported stream comes after both.
  ASSERT_EQ(hip->LaunchHostFunc(stream, sleep_50ms, nullptr), hipSuccess);
  ASSERT_EQ(hip->MemsetD8Async(native, 0x5a, n, stream), hipSuccess);
  std::vector<uint8_t> out(n, 0);
  ASSERT_OK(xal_memcpy_dtoh(imported, out.data(), p, n));
  ASSERT_OK(xal_memset(imported, p, 0x11, 16));
  ASSERT_OK(xal_stream_synchronize(imported));
  EXPECT_EQ(out, std::vector<uint8_t>(n, 0x5a));
  // Events and waits work on it as on any stream.
  xal_event_t e = nullptr;
  ASSERT_OK(xal_event_create(dev0, 0, &e));
  ASSERT_OK(xal_event_record(e, imported));
  ASSERT_OK(xal_stream_wait_event(s0, e));
  ASSERT_OK(xal_event_synchronize(e));
  ASSERT_OK(xal_event_destroy(e));
  // Destroying xal's stream leaves the owner's usable.
  ASSERT_OK(xal_stream_destroy(imported));
  EXPECT_STATUS(xal_stream_synchronize(imported), XAL_ERROR_INVALID_HANDLE);
  ASSERT_EQ(hip->MemsetD8Async(native, 0x22, 8, stream), hipSuccess);
  ASSERT_EQ(hip->StreamSynchronize(stream), hipSuccess);
  ASSERT_EQ(hip->MemcpyDtoHAsync(out.data(), native, 32, nullptr), hipSuccess);
  EXPECT_EQ(out[0], 0x22);
  EXPECT_EQ(out[8], 0x11);
  EXPECT_EQ(out[16], 0x5a);
  ASSERT_EQ(hip->StreamDestroy(stream), hipSuccess);
  ASSERT_OK(xal_mem_free(dev0, p));
}

TEST_F(HipInterop, StreamImportRefusesBadStreams) {
  xal_stream_t s = nullptr;
  EXPECT_STATUS(xal_stream_import(dev0, 0, 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_stream_import(dev0, 0x1234, 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_stream_import(nullptr, 0x1234, 0, &s), XAL_ERROR_INVALID_HANDLE);
  // Not a stream: refused with the runtime's code.
  EXPECT_STATUS(xal_stream_import(dev0, 0x1234, 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(xal_error().vendor_code, hipErrorContextIsDestroyed);
  EXPECT_NE(std::string(xal_error().message).find("not a live HIP stream"), std::string::npos)
      << xal_error().message;
  // A stream of another device, and unknown flags.
  hipStream_t other = nullptr;
  ASSERT_EQ(hip->SetDevice(1), hipSuccess);
  ASSERT_EQ(hip->StreamCreateWithFlags(&other, 0), hipSuccess);
  EXPECT_STATUS(xal_stream_import(dev0, as_native(other), 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xal_error().message).find("stream of HIP device 1"), std::string::npos)
      << xal_error().message;
  EXPECT_STATUS(xal_stream_import(dev1, as_native(other), 7, &s), XAL_ERROR_INVALID_ARGUMENT);
  // A destroyed stream.
  ASSERT_EQ(hip->StreamDestroy(other), hipSuccess);
  EXPECT_STATUS(xal_stream_import(dev1, as_native(other), 0, &s), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_F(HipInterop, AnotherProcessWritesThroughAnIpcHandle) {
  xaltest::ipc_export_to_a_child(dev0, s0, XAL_IPC_PEER);
}

TEST_F(HipInterop, OpenedMemoryIsTheExportersAndEndsWithIt) {
  xaltest::ipc_open_from_a_child(dev0, dev1, XAL_IPC_PEER, hipErrorInvalidValue);
}

TEST_F(HipInterop, AKilledExporterMakesTheNextCallFail) {
  xaltest::ipc_exporter_killed(dev0, s0, XAL_IPC_PEER);
}

// A runtime without the interop calls: the features are NOT_SUPPORTED,
// never a crash, and the devices do not claim them.
class HipWithoutInterop : public HipInterop {
 protected:
  const char* library() const override { return XAL_HIP_SIM_NO_INTEROP_PATH; }
};

TEST_F(HipWithoutInterop, ReportsNotSupported) {
  xal_device_properties_t props{};
  props.struct_size = sizeof props;
  ASSERT_OK(xal_device_get_properties(dev0, &props));
  EXPECT_FALSE(props.capabilities & XAL_DEVICE_CAP_MEM_IMPORT);
  EXPECT_FALSE(props.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT);
  EXPECT_FALSE(props.capabilities & XAL_DEVICE_CAP_IPC);
  void* native = native_alloc(0, 256);
  xal_devptr_t p = 0;
  EXPECT_STATUS(xal_mem_import(dev0, as_native(native), 256, 0, &p), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(xal_error().message).find("hipPointerGetAttributes"), std::string::npos)
      << xal_error().message;
  hipStream_t stream = nullptr;
  ASSERT_EQ(hip->StreamCreateWithFlags(&stream, 0), hipSuccess);
  xal_stream_t s = nullptr;
  EXPECT_STATUS(xal_stream_import(dev0, as_native(stream), 0, &s), XAL_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(hip->StreamDestroy(stream), hipSuccess);
  xal_devptr_t q = 0;
  ASSERT_OK(xal_mem_alloc(dev0, 256, &q));
  xal_ipc_handle_t h{};
  EXPECT_STATUS(xal_mem_get_ipc_handle(dev0, q, &h), XAL_ERROR_NOT_SUPPORTED);
  ASSERT_OK(xal_mem_free(dev0, q));
}

}  // namespace
