// ABI 1.1 interop on the mock through the public ABI: memory and streams a
// framework owns (xal_mem_import, xal_stream_import), host registration and
// IPC handles between two processes, each with its bad inputs.

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "xal/xal.h"
#include "xal/xal_backend.h"
#include "xal/xal_fault.h"
#include "xaltest/interop.h"


namespace {

xal_error_info_t last_error() {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  return e;
}

#define ASSERT_OK(call) ASSERT_EQ((call), XAL_SUCCESS) << last_error().message
#define EXPECT_OK(call) EXPECT_EQ((call), XAL_SUCCESS) << last_error().message
#define EXPECT_STATUS(call, status)                                       \
  do {                                                                    \
    EXPECT_EQ((call), (status)) << last_error().message;                  \
    EXPECT_GT(std::strlen(last_error().message), 0u);                     \
  } while (0)

class Interop : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("XAL_BACKENDS", backends(), 1);
    setenv("XAL_MOCK_DEVICES", "2*a100-40g", 1);
    unsetenv("XAL_FAULTS");
    ASSERT_OK(xal_init(nullptr));
    ASSERT_OK(xal_device_get(0, &dev0));
    ASSERT_OK(xal_device_get(1, &dev1));
    ASSERT_OK(xal_stream_create(dev0, 0, &s0));
    ASSERT_OK(xal_stream_create(dev1, 0, &s1));
  }
  void TearDown() override {
    xal_shutdown();
    unsetenv("XAL_FAULTS");
  }
  virtual const char* backends() const { return XAL_MOCK_PLUGIN; }

  // Memory "the framework" allocated through the backend directly: xal does
  // not know it.
  xal_devptr_t native_alloc(xal_device_t dev, size_t bytes) {
    const xal_backend_table_t* t = nullptr;
    void* native = nullptr;
    EXPECT_OK(xal_handle_get_native(dev, &t, &native));
    xal_devptr_t p = 0;
    EXPECT_OK(t->mem_alloc(static_cast<xal_bdevice_t*>(native), bytes, &p));
    native_allocs_.push_back({t, native, p});
    return p;
  }

  xal_device_t dev0 = nullptr, dev1 = nullptr;
  xal_stream_t s0 = nullptr, s1 = nullptr;

 private:
  struct NativeAlloc {
    const xal_backend_table_t* t;
    void* device;
    xal_devptr_t p;
  };
  std::vector<NativeAlloc> native_allocs_;
};

TEST_F(Interop, MockDevicesAdvertiseTheInteropCapabilities) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_OK(xal_device_get_properties(dev0, &p));
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_MEM_IMPORT);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_IPC);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_HOST_POINTERS);
  EXPECT_EQ(xal_abi_version(), (1u << 16) | 1u);
}

TEST_F(Interop, ImportedDeviceMemoryIsUsedInPlaceAndStaysTheOwners) {
  const size_t n = 4096;
  const xal_devptr_t native = native_alloc(dev0, n);
  xal_devptr_t p = 0;
  ASSERT_OK(xal_mem_import(dev0, native, n, 0, &p));
  EXPECT_EQ(p, native);
  std::vector<uint8_t> in(n), out(n, 0);
  std::iota(in.begin(), in.end(), uint8_t{3});
  ASSERT_OK(xal_memcpy_htod(s0, p, in.data(), n));
  ASSERT_OK(xal_memset(s0, p + 100, 0xab, 10));
  ASSERT_OK(xal_stream_synchronize(s0));
  // Read back through the framework's own pointer (a mock address is a host
  // address).
  std::memcpy(out.data(), reinterpret_cast<const void*>(native), n);
  for (size_t i = 100; i < 110; ++i) in[i] = 0xab;
  EXPECT_EQ(in, out);
  // Bounds are the imported size.
  EXPECT_STATUS(xal_memcpy_dtoh(s0, out.data(), p + 1, n), XAL_ERROR_OUT_OF_BOUNDS);
  // Freeing forgets the import; the memory stays the owner's and readable.
  ASSERT_OK(xal_mem_free(dev0, p));
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(native), in.data(), n), 0);
  EXPECT_STATUS(xal_memcpy_dtoh(s0, out.data(), p, 16), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_STATUS(xal_mem_free(dev0, p), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_F(Interop, ImportedHostMemoryTakesAnAllreduceInPlaceOnImportedStreams) {
  const size_t count = 1000;
  std::vector<float> a(count), b(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i + 1);
  }
  xal_devptr_t pa = 0, pb = 0;
  ASSERT_OK(xal_mem_import(dev0, reinterpret_cast<uint64_t>(a.data()), count * 4,
                           XAL_MEM_IMPORT_HOST, &pa));
  ASSERT_OK(xal_mem_import(dev1, reinterpret_cast<uint64_t>(b.data()), count * 4,
                           XAL_MEM_IMPORT_HOST, &pb));
  // The framework's streams, adopted.
  const xal_backend_table_t* t = nullptr;
  void* n0 = nullptr;
  void* n1 = nullptr;
  ASSERT_OK(xal_handle_get_native(s0, &t, &n0));
  ASSERT_OK(xal_handle_get_native(s1, &t, &n1));
  xal_stream_t i0 = nullptr, i1 = nullptr;
  ASSERT_OK(xal_stream_import(dev0, reinterpret_cast<uint64_t>(n0), 0, &i0));
  ASSERT_OK(xal_stream_import(dev1, reinterpret_cast<uint64_t>(n1), 0, &i1));
  xal_device_t devs[2] = {dev0, dev1};
  xal_comm_t comms[2];
  ASSERT_OK(xal_comm_create(devs, 2, nullptr, comms));
  ASSERT_OK(xal_group_start());
  ASSERT_OK(xal_allreduce(comms[0], pa, pa, count, XAL_DTYPE_F32, XAL_OP_SUM, i0));
  ASSERT_OK(xal_allreduce(comms[1], pb, pb, count, XAL_DTYPE_F32, XAL_OP_SUM, i1));
  ASSERT_OK(xal_group_end());
  ASSERT_OK(xal_stream_synchronize(i0));
  ASSERT_OK(xal_stream_synchronize(i1));
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(a[i], static_cast<float>(3 * i + 1)) << i;
    ASSERT_EQ(b[i], static_cast<float>(3 * i + 1)) << i;
  }
  ASSERT_OK(xal_comm_destroy(comms[0]));
  ASSERT_OK(xal_comm_destroy(comms[1]));
  // Destroying the imported streams leaves the framework's streams alive.
  ASSERT_OK(xal_stream_destroy(i0));
  ASSERT_OK(xal_stream_destroy(i1));
  ASSERT_OK(xal_memset(s0, pa, 0, 4));
  ASSERT_OK(xal_stream_synchronize(s0));
  EXPECT_EQ(a[0], 0.0f);
  ASSERT_OK(xal_mem_free(dev0, pa));
  ASSERT_OK(xal_mem_free(dev1, pb));
}

TEST_F(Interop, ImportRefusesBadInput) {
  std::vector<uint8_t> host(8192);
  const auto h = reinterpret_cast<uint64_t>(host.data());
  xal_devptr_t p = 0, q = 0;
  EXPECT_STATUS(xal_mem_import(nullptr, h, 16, XAL_MEM_IMPORT_HOST, &p), XAL_ERROR_INVALID_HANDLE);
  EXPECT_STATUS(xal_mem_import(dev0, h, 16, XAL_MEM_IMPORT_HOST, nullptr),
                XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev0, 0, 16, XAL_MEM_IMPORT_HOST, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev0, h, 0, XAL_MEM_IMPORT_HOST, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev0, h, 16, 0x80, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev0, ~uint64_t{0} - 8, 64, XAL_MEM_IMPORT_HOST, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  // Host memory without the flag is not the device's memory.
  EXPECT_STATUS(xal_mem_import(dev0, h, 16, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  // Unmapped host memory: a clear error, not a crash.
  EXPECT_STATUS(xal_mem_import(dev0, 0x1000, 4096, XAL_MEM_IMPORT_HOST, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  // Overlap with a live import, and with an xal allocation.
  ASSERT_OK(xal_mem_import(dev0, h, 4096, XAL_MEM_IMPORT_HOST, &p));
  EXPECT_STATUS(xal_mem_import(dev0, h + 100, 16, XAL_MEM_IMPORT_HOST, &q),
                XAL_ERROR_INVALID_ARGUMENT);
  xal_devptr_t owned = 0;
  ASSERT_OK(xal_mem_alloc(dev0, 4096, &owned));
  EXPECT_STATUS(xal_mem_import(dev0, owned + 256, 16, 0, &q), XAL_ERROR_INVALID_ARGUMENT);
  // Freed on the wrong device, then twice.
  EXPECT_STATUS(xal_mem_free(dev1, p), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(xal_mem_free(dev0, p));
  EXPECT_STATUS(xal_mem_free(dev0, p), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(xal_mem_free(dev0, owned));
  // Another device's memory is not this one's.
  const xal_devptr_t other = native_alloc(dev1, 256);
  EXPECT_STATUS(xal_mem_import(dev0, other, 256, 0, &q), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_F(Interop, ImportsAreNotCountedByQuotasAndEndAtShutdown) {
  ASSERT_OK(xal_device_set_memory_limit(dev0, 4096));
  std::vector<uint8_t> host(1 << 20);
  xal_devptr_t p = 0;
  ASSERT_OK(xal_mem_import(dev0, reinterpret_cast<uint64_t>(host.data()), host.size(),
                           XAL_MEM_IMPORT_HOST, &p));
  uint64_t free_bytes = 0, total = 0;
  ASSERT_OK(xal_mem_get_info(dev0, &free_bytes, &total));
  EXPECT_EQ(total, 4096u);
  EXPECT_EQ(free_bytes, 4096u);
  // Left imported: shutdown (TearDown) releases the import, not the memory.
}

TEST_F(Interop, StreamImportRefusesBadInput) {
  xal_stream_t s = nullptr;
  EXPECT_STATUS(xal_stream_import(dev0, 0, 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_stream_import(dev0, 0x1234, 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_stream_import(dev0, 0x1234, 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  const xal_backend_table_t* t = nullptr;
  void* n1 = nullptr;
  ASSERT_OK(xal_handle_get_native(s1, &t, &n1));
  // A stream of another device.
  EXPECT_STATUS(xal_stream_import(dev0, reinterpret_cast<uint64_t>(n1), 0, &s),
                XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_stream_import(dev1, reinterpret_cast<uint64_t>(n1), 7, &s),
                XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_stream_import(nullptr, reinterpret_cast<uint64_t>(n1), 0, &s),
                XAL_ERROR_INVALID_HANDLE);
  // The original destroyed first: the import keeps the queue working.
  ASSERT_OK(xal_stream_import(dev1, reinterpret_cast<uint64_t>(n1), 0, &s));
  ASSERT_OK(xal_stream_destroy(s1));
  s1 = nullptr;
  xal_devptr_t p = 0;
  ASSERT_OK(xal_mem_alloc(dev1, 64, &p));
  ASSERT_OK(xal_memset(s, p, 1, 64));
  ASSERT_OK(xal_stream_synchronize(s));
  ASSERT_OK(xal_stream_destroy(s));
  EXPECT_STATUS(xal_stream_synchronize(s), XAL_ERROR_INVALID_HANDLE);
}

TEST_F(Interop, HostRegistration) {
  std::vector<uint8_t> host(1 << 16, 7);
  void* h = host.data();
  EXPECT_STATUS(xal_host_register(nullptr, 16, 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_host_register(h, 0, 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_host_register(h, 16, 3), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(xal_host_register(h, host.size(), 0));
  EXPECT_STATUS(xal_host_register(h, 16, 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_host_register(host.data() + 100, 16, 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_host_free(h), XAL_ERROR_INVALID_ARGUMENT);
  // Copies use it directly.
  xal_devptr_t p = 0;
  ASSERT_OK(xal_mem_alloc(dev0, host.size(), &p));
  ASSERT_OK(xal_memcpy_htod(s0, p, h, host.size()));
  ASSERT_OK(xal_memset(s0, p, 9, 8));
  ASSERT_OK(xal_memcpy_dtoh(s0, h, p, host.size()));
  ASSERT_OK(xal_stream_synchronize(s0));
  EXPECT_EQ(host[0], 9);
  EXPECT_EQ(host[8], 7);
  EXPECT_STATUS(xal_host_unregister(host.data() + 1), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(xal_host_unregister(h));
  EXPECT_STATUS(xal_host_unregister(h), XAL_ERROR_INVALID_ARGUMENT);
  void* pinned = nullptr;
  ASSERT_OK(xal_host_alloc(4096, 0, &pinned));
  EXPECT_STATUS(xal_host_register(pinned, 16, 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_host_unregister(pinned), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(xal_host_free(pinned));
  ASSERT_OK(xal_mem_free(dev0, p));
}

// The IPC cases every backend with IPC handles runs (xaltest/interop.h),
// against xal_ipc_peer, a second process that uses only xal.h.
TEST_F(Interop, AnotherProcessWritesThroughAnIpcHandle) {
  xal_devptr_t p = 0;
  ASSERT_OK(xal_mem_alloc(dev0, 512, &p));  // the export is not at the arena's start
  xaltest::ipc_export_to_a_child(dev0, s0, XAL_IPC_PEER);
  ASSERT_OK(xal_mem_free(dev0, p));
}

TEST_F(Interop, AChildsMemoryIsOpenedReadAndWrittenUntilItEnds) {
  // A damaged mock part of a handle is refused by the mock (no vendor code).
  xaltest::ipc_open_from_a_child(dev0, dev1, XAL_IPC_PEER, 0);
}

TEST_F(Interop, AKilledExporterMakesTheImportersNextCallFail) {
  xaltest::ipc_exporter_killed(dev0, s0, XAL_IPC_PEER);
}

TEST_F(Interop, AHandleOfAnotherHostIsRefused) {
  xaltest::Child c = xaltest::Child::spawn({XAL_IPC_PEER, "export", "4096"});
  ASSERT_GT(c.pid, 0);
  xal_ipc_handle_t h = xaltest::parse_handle(c.line());
  h.bytes[40] ^= 0xff;  // inside the host identity (bytes 32..47)
  xal_devptr_t r = 0;
  EXPECT_STATUS(xal_mem_open_ipc_handle(dev0, &h, 0, &r, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("another host"), std::string::npos);
  c.send("done");
  c.finish();
}

TEST_F(Interop, AHandleNamingAnotherFileIsRefused) {
  // The mock part names the exporter's memory file by descriptor and by
  // identity (device and inode): a descriptor that now names another file
  // (a reused process id, a damaged handle) is refused, not mapped.
  xaltest::Child c = xaltest::Child::spawn({XAL_IPC_PEER, "export", "4096"});
  ASSERT_GT(c.pid, 0);
  xal_ipc_handle_t h = xaltest::parse_handle(c.line());
  h.bytes[64 + 40] ^= 0x5a;  // inside the mock part's inode (its bytes 40..47)
  xal_devptr_t r = 0;
  EXPECT_STATUS(xal_mem_open_ipc_handle(dev0, &h, 0, &r, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("another file"), std::string::npos)
      << last_error().message;
  c.send("done");
  c.finish();
}

// The same through the fault backend: the entries are injection points.
class InteropFault : public Interop {
 protected:
  const char* backends() const override { return "fault:" XAL_MOCK_PLUGIN; }
};

TEST_F(InteropFault, InjectedErrorsReachTheCallerAndTheImportWorksAfter) {
  std::vector<uint8_t> host(4096);
  const auto h = reinterpret_cast<uint64_t>(host.data());
  xal_devptr_t p = 0;
  ASSERT_OK(xal_fault_load_plan("mem_import=nth(1)OUT_OF_MEMORY;stream_import=nth(1)DEVICE_LOST",
                                XAL_FAULT_PLAN_REPLACE));
  EXPECT_STATUS(xal_mem_import(dev0, h, host.size(), XAL_MEM_IMPORT_HOST, &p),
                XAL_ERROR_OUT_OF_MEMORY);
  ASSERT_OK(xal_mem_import(dev0, h, host.size(), XAL_MEM_IMPORT_HOST, &p));
  ASSERT_OK(xal_memset(s0, p, 5, 16));
  ASSERT_OK(xal_stream_synchronize(s0));
  EXPECT_EQ(host[15], 5);
  ASSERT_OK(xal_mem_free(dev0, p));
  const xal_backend_table_t* t = nullptr;
  void* n0 = nullptr;
  ASSERT_OK(xal_handle_get_native(s0, &t, &n0));
  xal_stream_t s = nullptr;
  EXPECT_EQ(xal_stream_import(dev0, reinterpret_cast<uint64_t>(n0), 0, &s),
            XAL_ERROR_DEVICE_LOST);
}

}  // namespace
