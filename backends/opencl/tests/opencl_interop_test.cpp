// ABI 1.1 interop of the OpenCL backend through libxal, for real on the
// platform here (PoCL in CI; skipped where none loads): buffers and queues
// made with OpenCL directly in the device's context ("as a framework
// would", the context from xal_opencl_native_v1), imported, used by xal
// (copies, memset, a kernel) and read back through OpenCL; the refusals;
// no IPC. A pointer that is no OpenCL object at all is not offered here:
// the ICD loader dereferences it before the driver can refuse it (the fake
// library's test, table_interop_test.cpp, covers that refusal).
#include <CL/cl.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "xal/xal.h"
#include "xal/xal_backend.h"
#include "xal_opencl.h"

namespace {

xal_error_info_t last_error() {
  xal_error_info_t e{};
  e.struct_size = sizeof(e);
  xal_last_error(&e);
  return e;
}

#define ASSERT_OK(call) ASSERT_EQ((call), XAL_SUCCESS) << last_error().message
#define EXPECT_OK(call) EXPECT_EQ((call), XAL_SUCCESS) << last_error().message
#define EXPECT_STATUS(call, status)                            \
  do {                                                         \
    EXPECT_EQ((call), (status)) << last_error().message;       \
    EXPECT_GT(std::strlen(last_error().message), 0u);          \
  } while (0)

// The OpenCL library the backend loaded, called directly.
struct Cl {
#define XAL_CL_FN(name) decltype(&::name) name = nullptr;
#define XAL_CL_FNS(X)                                                                   \
  X(clCreateBuffer) X(clReleaseMemObject) X(clGetMemObjectInfo) X(clCreateCommandQueue) \
  X(clReleaseCommandQueue) X(clGetCommandQueueInfo) X(clEnqueueWriteBuffer)             \
  X(clEnqueueReadBuffer) X(clEnqueueFillBuffer) X(clEnqueueBarrierWithWaitList)         \
  X(clFinish) X(clCreateUserEvent) X(clSetUserEventStatus) X(clReleaseEvent)            \
  X(clCreateContext) X(clReleaseContext)
  XAL_CL_FNS(XAL_CL_FN)
#undef XAL_CL_FN

  explicit Cl(void* lib) {
#define XAL_CL_GET(name)                                        \
  name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name)); \
  EXPECT_NE(name, nullptr) << #name;
    XAL_CL_FNS(XAL_CL_GET)
#undef XAL_CL_GET
  }
};

class OpenclInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("XAL_OPENCL_LIBRARY");
    xal_init_options_t o{};
    o.struct_size = sizeof(o);
    o.backends = XAL_OPENCL_PLUGIN;
    o.validation = -1;
    ASSERT_OK(xal_init(&o));
    uint32_t n = 0;
    ASSERT_OK(xal_backend_count(&n));
    ASSERT_EQ(n, 1u);
    xal_backend_info_t info{};
    info.struct_size = sizeof(info);
    ASSERT_OK(xal_backend_get_info(0, &info));
    if (info.state != XAL_BACKEND_STATE_LOADED) {
      GTEST_SKIP() << "OpenCL backend not loaded here: " << info.reason;
    }
    ASSERT_OK(xal_device_get(0, &dev));
    ASSERT_OK(xal_stream_create(dev, 0, &stream));
    const xal_backend_table_t* table = nullptr;
    xal_backend_t* backend = nullptr;
    ASSERT_OK(xal_backend_get_native(0, &table, &backend));
    native = static_cast<const xal_opencl_native_v1_t*>(
        table->get_extension(backend, XAL_OPENCL_NATIVE_EXTENSION));
    ASSERT_NE(native, nullptr);
    objects(dev, &ctx, &device_id);
    lib_ = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(lib_, nullptr) << dlerror();
    cl = std::make_unique<Cl>(lib_);
    queue = make_queue(0);
  }
  void TearDown() override {
    if (queue != nullptr) {
      EXPECT_EQ(cl->clReleaseCommandQueue(queue), CL_SUCCESS);
    }
    if (stream != nullptr) {
      EXPECT_OK(xal_stream_destroy(stream));
    }
    EXPECT_OK(xal_shutdown());
    if (lib_ != nullptr) dlclose(lib_);
  }

  // The cl_context and cl_device_id behind an xal device.
  void objects(xal_device_t device, cl_context* out_ctx, cl_device_id* out_id) {
    const xal_backend_table_t* t = nullptr;
    void* bdev = nullptr;
    ASSERT_OK(xal_handle_get_native(device, &t, &bdev));
    void* c = nullptr;
    void* d = nullptr;
    ASSERT_OK(native->device_objects(static_cast<xal_bdevice_t*>(bdev), &c, &d));
    *out_ctx = static_cast<cl_context>(c);
    *out_id = static_cast<cl_device_id>(d);
  }
  cl_command_queue make_queue(cl_command_queue_properties properties) {
    cl_int rc = CL_SUCCESS;
    cl_command_queue q = cl->clCreateCommandQueue(ctx, device_id, properties, &rc);
    EXPECT_EQ(rc, CL_SUCCESS);
    return q;
  }
  cl_mem make_buffer(cl_context context, size_t bytes) {
    cl_int rc = CL_SUCCESS;
    cl_mem m = cl->clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
    EXPECT_EQ(rc, CL_SUCCESS);
    return m;
  }
  cl_uint mem_refs(cl_mem m) {
    cl_uint refs = 0;
    EXPECT_EQ(cl->clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
              CL_SUCCESS);
    return refs;
  }
  cl_uint queue_refs(cl_command_queue q) {
    cl_uint refs = 0;
    EXPECT_EQ(cl->clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
              CL_SUCCESS);
    return refs;
  }
  static uint64_t as_native(const void* p) { return reinterpret_cast<uint64_t>(p); }

  xal_device_t dev = nullptr;
  xal_stream_t stream = nullptr;
  const xal_opencl_native_v1_t* native = nullptr;
  cl_context ctx = nullptr;
  cl_device_id device_id = nullptr;
  cl_command_queue queue = nullptr;  // the framework's
  std::unique_ptr<Cl> cl;

 private:
  void* lib_ = nullptr;
};

TEST_F(OpenclInterop, DevicesAdvertiseImportsAndNoIpc) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_OK(xal_device_get_properties(dev, &p));
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_MEM_IMPORT);
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT);
  EXPECT_FALSE(p.capabilities & XAL_DEVICE_CAP_IPC);
  EXPECT_FALSE(p.capabilities & XAL_DEVICE_CAP_HOST_POINTERS);
  xal_devptr_t d = 0;
  ASSERT_OK(xal_mem_alloc(dev, 256, &d));
  xal_ipc_handle_t h{};
  EXPECT_STATUS(xal_mem_get_ipc_handle(dev, d, &h), XAL_ERROR_NOT_SUPPORTED);
  xal_devptr_t r = 0;
  EXPECT_STATUS(xal_mem_open_ipc_handle(dev, &h, 0, &r, nullptr), XAL_ERROR_NOT_SUPPORTED);
  ASSERT_OK(xal_mem_free(dev, d));
}

TEST_F(OpenclInterop, ImportedBufferIsUsedInPlaceAndStaysTheOwners) {
  const size_t n = 8192;
  cl_mem mem = make_buffer(ctx, n);
  std::vector<uint8_t> in(n), out(n, 0);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint8_t>(i * 13 + 5);
  ASSERT_EQ(cl->clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, n, in.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  xal_devptr_t p = 0;
  ASSERT_OK(xal_mem_import(dev, as_native(mem), n, 0, &p));
  EXPECT_EQ(mem_refs(mem), 2u);
  // xal reads what OpenCL wrote, and writes at offsets inside the buffer.
  ASSERT_OK(xal_memcpy_dtoh(stream, out.data(), p, n));
  ASSERT_OK(xal_stream_synchronize(stream));
  EXPECT_EQ(out, in);
  ASSERT_OK(xal_memset(stream, p + 100, 0xab, 50));
  xal_devptr_t owned = 0;
  ASSERT_OK(xal_mem_alloc(dev, n, &owned));
  ASSERT_OK(xal_memcpy_dtod(stream, owned, p, n));
  ASSERT_OK(xal_memcpy_dtod(stream, p + 4096, owned, 64));
  // A kernel takes the imported address as a buffer argument.
  const char src[] =
      "__kernel void add(__global uchar* d, uchar v, uint n) {"
      "  size_t i = get_global_id(0); if (i < n) d[i] += v; }";
  xal_module_t m = nullptr;
  ASSERT_OK(xal_module_load(dev, XAL_MODULE_FORMAT_OPENCL_C, src, sizeof(src), &m));
  xal_kernel_t k = nullptr;
  ASSERT_OK(xal_kernel_get(m, "add", &k));
  uint8_t v = 1;
  uint32_t count = 32;
  void* args[] = {&p, &v, &count};
  const size_t sizes[] = {8, 1, 4};
  xal_launch_config_t cfg{sizeof(cfg), {1, 1, 1}, {32, 1, 1}, 0, sizes};
  ASSERT_OK(xal_kernel_launch(stream, k, &cfg, args, 3));
  ASSERT_OK(xal_stream_synchronize(stream));
  for (size_t i = 100; i < 150; ++i) in[i] = 0xab;
  for (size_t i = 0; i < 64; ++i) in[4096 + i] = in[i];
  for (size_t i = 0; i < 32; ++i) in[i] = static_cast<uint8_t>(in[i] + 1);
  // Read back through OpenCL.
  ASSERT_EQ(cl->clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, n, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(out, in);
  EXPECT_STATUS(xal_memcpy_dtoh(stream, out.data(), p + 1, n), XAL_ERROR_OUT_OF_BOUNDS);
  // Freeing forgets the import and gives back its reference only.
  ASSERT_OK(xal_mem_free(dev, p));
  EXPECT_EQ(mem_refs(mem), 1u);
  EXPECT_STATUS(xal_mem_free(dev, p), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(cl->clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, n, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(out, in);
  // Part of a buffer: bounds are the imported size.
  ASSERT_OK(xal_mem_import(dev, as_native(mem), 1024, 0, &p));
  ASSERT_OK(xal_memset(stream, p, 0x11, 1024));
  EXPECT_STATUS(xal_memset(stream, p, 0x11, 1025), XAL_ERROR_OUT_OF_BOUNDS);
  ASSERT_OK(xal_stream_synchronize(stream));
  ASSERT_EQ(cl->clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, n, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(out[1023], 0x11);
  EXPECT_EQ(out[1024], in[1024]);
  ASSERT_OK(xal_mem_free(dev, p));
  ASSERT_OK(xal_mem_free(dev, owned));
  EXPECT_OK(xal_module_unload(m));
  EXPECT_EQ(cl->clReleaseMemObject(mem), CL_SUCCESS);
}

TEST_F(OpenclInterop, AnImportedQueueOrdersXalsWorkAfterTheOwnersWork) {
  const size_t n = 4096;
  cl_mem mem = make_buffer(ctx, n);
  xal_devptr_t p = 0;
  ASSERT_OK(xal_mem_import(dev, as_native(mem), n, 0, &p));
  xal_stream_t imported = nullptr;
  ASSERT_OK(xal_stream_import(dev, as_native(queue), 0, &imported));
  EXPECT_EQ(queue_refs(queue), 2u);
  // The owner's work waits for a gate, then fills; xal's read comes after.
  cl_int rc = CL_SUCCESS;
  cl_event gate = cl->clCreateUserEvent(ctx, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  ASSERT_EQ(cl->clEnqueueBarrierWithWaitList(queue, 1, &gate, nullptr), CL_SUCCESS);
  const uint8_t value = 0x5a;
  ASSERT_EQ(cl->clEnqueueFillBuffer(queue, mem, &value, 1, 0, n, 0, nullptr, nullptr),
            CL_SUCCESS);
  std::vector<uint8_t> out(n, 0);
  ASSERT_OK(xal_memcpy_dtoh(imported, out.data(), p, n));
  EXPECT_EQ(xal_stream_query(imported), XAL_NOT_READY);
  ASSERT_EQ(cl->clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  ASSERT_OK(xal_stream_synchronize(imported));
  EXPECT_EQ(out, std::vector<uint8_t>(n, 0x5a));
  EXPECT_EQ(cl->clReleaseEvent(gate), CL_SUCCESS);
  // Events work on it as on any stream.
  xal_event_t e = nullptr;
  ASSERT_OK(xal_event_create(dev, 0, &e));
  ASSERT_OK(xal_memset(imported, p, 0x11, 16));
  ASSERT_OK(xal_event_record(e, imported));
  ASSERT_OK(xal_stream_wait_event(stream, e));
  ASSERT_OK(xal_event_synchronize(e));
  ASSERT_OK(xal_event_destroy(e));
  // Destroying xal's stream gives back its reference (counted exactly on
  // the fake library: PoCL's events hold their queue a while); the queue
  // works on.
  ASSERT_OK(xal_stream_destroy(imported));
  const uint8_t two = 0x22;
  ASSERT_EQ(cl->clEnqueueFillBuffer(queue, mem, &two, 1, 0, 8, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(cl->clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, 32, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(out[0], 0x22);
  EXPECT_EQ(out[8], 0x11);
  EXPECT_EQ(out[16], 0x5a);
  ASSERT_OK(xal_mem_free(dev, p));
  EXPECT_EQ(cl->clReleaseMemObject(mem), CL_SUCCESS);
}

TEST_F(OpenclInterop, ImportsRefuseObjectsOfAnotherContext) {
  cl_int rc = CL_SUCCESS;
  cl_context other = cl->clCreateContext(nullptr, 1, &device_id, nullptr, nullptr, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  cl_mem foreign = make_buffer(other, 4096);
  cl_command_queue foreign_queue = cl->clCreateCommandQueue(other, device_id, 0, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  xal_devptr_t p = 0;
  EXPECT_STATUS(xal_mem_import(dev, as_native(foreign), 4096, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("another context"), std::string::npos)
      << last_error().message;
  xal_stream_t s = nullptr;
  EXPECT_STATUS(xal_stream_import(dev, as_native(foreign_queue), 0, &s),
                XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("another context"), std::string::npos)
      << last_error().message;
  EXPECT_EQ(mem_refs(foreign), 1u);
  EXPECT_EQ(queue_refs(foreign_queue), 1u);
  EXPECT_EQ(cl->clReleaseCommandQueue(foreign_queue), CL_SUCCESS);
  EXPECT_EQ(cl->clReleaseMemObject(foreign), CL_SUCCESS);
  EXPECT_EQ(cl->clReleaseContext(other), CL_SUCCESS);
}

TEST_F(OpenclInterop, ImportsRefuseBadInput) {
  cl_mem mem = make_buffer(ctx, 4096);
  xal_devptr_t p = 0;
  EXPECT_STATUS(xal_mem_import(nullptr, as_native(mem), 16, 0, &p), XAL_ERROR_INVALID_HANDLE);
  EXPECT_STATUS(xal_mem_import(dev, as_native(mem), 16, 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev, 0, 16, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev, as_native(mem), 0, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev, as_native(mem), 16, 0x80, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev, as_native(mem), 16, XAL_MEM_IMPORT_HOST, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_mem_import(dev, as_native(mem), 4097, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  xal_stream_t s = nullptr;
  EXPECT_STATUS(xal_stream_import(dev, 0, 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_stream_import(dev, as_native(queue), 3, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(xal_stream_import(dev, as_native(queue), 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  // An out-of-order queue, where the platform makes one.
  cl_int rc = CL_SUCCESS;
  cl_command_queue unordered =
      cl->clCreateCommandQueue(ctx, device_id, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &rc);
  if (rc == CL_SUCCESS) {
    EXPECT_STATUS(xal_stream_import(dev, as_native(unordered), 0, &s),
                  XAL_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(last_error().message).find("out-of-order"), std::string::npos)
        << last_error().message;
    EXPECT_EQ(cl->clReleaseCommandQueue(unordered), CL_SUCCESS);
  }
  // Overlap is per address: one buffer imported twice is two ranges.
  xal_devptr_t q = 0;
  ASSERT_OK(xal_mem_import(dev, as_native(mem), 4096, 0, &p));
  ASSERT_OK(xal_mem_import(dev, as_native(mem), 4096, 0, &q));
  EXPECT_NE(p, q);
  EXPECT_EQ(mem_refs(mem), 3u);
  ASSERT_OK(xal_mem_free(dev, p));
  ASSERT_OK(xal_mem_free(dev, q));
  EXPECT_EQ(mem_refs(mem), 1u);
  EXPECT_EQ(cl->clReleaseMemObject(mem), CL_SUCCESS);
}

// Two devices of one context (POCL_DEVICES="pthread pthread", test
// xal_opencl_interop_two_devices): a buffer belongs to the context and
// imports on either device; a queue belongs to its device.
TEST_F(OpenclInterop, TwoDevicesOfOneContext) {
  uint32_t count = 0;
  ASSERT_OK(xal_device_count(&count));
  xal_device_t dev1 = nullptr;
  cl_context ctx1 = nullptr;
  cl_device_id id1 = nullptr;
  if (count >= 2) {
    ASSERT_OK(xal_device_get(1, &dev1));
    objects(dev1, &ctx1, &id1);
  }
  if (ctx1 != ctx) GTEST_SKIP() << "no second device in the same context here";
  cl_mem mem = make_buffer(ctx, 4096);
  xal_devptr_t p = 0;
  ASSERT_OK(xal_mem_import(dev1, as_native(mem), 4096, 0, &p));
  xal_stream_t s1 = nullptr;
  ASSERT_OK(xal_stream_create(dev1, 0, &s1));
  ASSERT_OK(xal_memset(s1, p, 0x33, 4096));
  ASSERT_OK(xal_stream_synchronize(s1));
  std::vector<uint8_t> out(4096, 0);
  ASSERT_EQ(cl->clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, 4096, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(out, std::vector<uint8_t>(4096, 0x33));
  xal_stream_t s = nullptr;
  EXPECT_STATUS(xal_stream_import(dev1, as_native(queue), 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("another device"), std::string::npos)
      << last_error().message;
  ASSERT_OK(xal_stream_destroy(s1));
  ASSERT_OK(xal_mem_free(dev1, p));
  EXPECT_EQ(cl->clReleaseMemObject(mem), CL_SUCCESS);
}

}  // namespace
