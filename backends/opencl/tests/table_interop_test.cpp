// ABI 1.1 interop through the table, against the fake OpenCL library
// (testing/fake_opencl.cpp): the references an import takes and gives back,
// and the refusals with their CL codes. Real data moves in
// opencl_interop_test.cpp, on PoCL.
#include "table_harness.h"
#include "xal_opencl.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace xal::opencl::testing {
namespace {

// An instance on the fake library in `mode`, device 0, and the fake's own
// entry points (the library the plugin loaded).
class OpenclFakeInterop : public ::testing::Test {
 protected:
  void start(const char* mode) {
    mode_ = std::make_unique<ScopedEnv>("XAL_FAKE_OPENCL_MODE", mode);
    t = plugin_table();
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(instance.start(), XAL_SUCCESS) << last_error().message;
    ASSERT_EQ(t->device_get(instance.get(), 0, &dev), XAL_SUCCESS);
    lib_ = dlopen(XAL_FAKE_OPENCL, RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(lib_, nullptr) << dlerror();
    create_buffer = reinterpret_cast<decltype(create_buffer)>(dlsym(lib_, "clCreateBuffer"));
    release_buffer =
        reinterpret_cast<decltype(release_buffer)>(dlsym(lib_, "clReleaseMemObject"));
    create_queue =
        reinterpret_cast<decltype(create_queue)>(dlsym(lib_, "clCreateCommandQueue"));
    release_queue =
        reinterpret_cast<decltype(release_queue)>(dlsym(lib_, "clReleaseCommandQueue"));
    refs = reinterpret_cast<decltype(refs)>(dlsym(lib_, "xal_fake_opencl_refs"));
    ASSERT_TRUE(create_buffer && release_buffer && create_queue && release_queue && refs);
    auto* native = static_cast<const xal_opencl_native_v1_t*>(
        t->get_extension(instance.get(), XAL_OPENCL_NATIVE_EXTENSION));
    ASSERT_NE(native, nullptr);
    ASSERT_EQ(native->struct_size, sizeof(xal_opencl_native_v1_t));
    void* context = nullptr;
    void* id = nullptr;
    ASSERT_EQ(native->device_objects(dev, &context, &id), XAL_SUCCESS);
    ctx = static_cast<cl_context>(context);
    device_id = static_cast<cl_device_id>(id);
  }
  void TearDown() override {
    if (lib_ != nullptr) dlclose(lib_);
  }
  static uint64_t as_native(const void* p) { return reinterpret_cast<uint64_t>(p); }

  const xal_backend_table_t* t = nullptr;
  Instance instance;
  xal_bdevice_t* dev = nullptr;
  cl_context ctx = nullptr;
  cl_device_id device_id = nullptr;
  decltype(&::clCreateBuffer) create_buffer = nullptr;
  decltype(&::clReleaseMemObject) release_buffer = nullptr;
  decltype(&::clCreateCommandQueue) create_queue = nullptr;
  decltype(&::clReleaseCommandQueue) release_queue = nullptr;
  int (*refs)(const void*) = nullptr;

 private:
  ScopedEnv lib_env_{"XAL_OPENCL_LIBRARY", XAL_FAKE_OPENCL};
  std::unique_ptr<ScopedEnv> mode_;
  void* lib_ = nullptr;
};

TEST_F(OpenclFakeInterop, TheTableHasImportsAndNoIpc) {
  start("gates");
  EXPECT_NE(t->mem_import, nullptr);
  EXPECT_NE(t->mem_import_release, nullptr);
  EXPECT_NE(t->stream_import, nullptr);
  EXPECT_EQ(t->mem_ipc_get, nullptr);
  EXPECT_EQ(t->mem_ipc_open, nullptr);
  EXPECT_EQ(t->mem_ipc_close, nullptr);
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(t->device_get_properties(dev, &p), XAL_SUCCESS);
  EXPECT_NE(p.capabilities & XAL_DEVICE_CAP_MEM_IMPORT, 0u);
  EXPECT_NE(p.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT, 0u);
  EXPECT_EQ(p.capabilities & XAL_DEVICE_CAP_IPC, 0u);
  EXPECT_EQ(t->get_extension(instance.get(), "xal_opencl_nothing"), nullptr);
}

TEST_F(OpenclFakeInterop, AnImportHoldsOneReferenceUntilReleased) {
  start("gates");
  cl_int rc = CL_SUCCESS;
  cl_mem mem = create_buffer(ctx, CL_MEM_READ_WRITE, 4096, nullptr, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  xal_devptr_t p = 0, q = 0;
  ASSERT_EQ(t->mem_import(dev, as_native(mem), 4096, 0, &p), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(refs(mem), 2);
  // A synthetic address of the device, like its own buffers; a second
  // import of the same buffer is another range and another reference.
  EXPECT_NE(p, 0u);
  EXPECT_NE(p, as_native(mem));
  ASSERT_EQ(t->mem_import(dev, as_native(mem), 1024, 0, &q), XAL_SUCCESS);
  EXPECT_NE(q, p);
  EXPECT_EQ(refs(mem), 3);
  // Imports do not count as the device's allocated memory.
  uint64_t free_bytes = 0, total = 0;
  ASSERT_EQ(t->mem_get_info(dev, &free_bytes, &total), XAL_SUCCESS);
  EXPECT_EQ(free_bytes, total);
  ASSERT_EQ(t->mem_import_release(dev, q), XAL_SUCCESS);
  ASSERT_EQ(t->mem_import_release(dev, p), XAL_SUCCESS);
  EXPECT_EQ(refs(mem), 1);
  EXPECT_EQ(t->mem_import_release(dev, p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("not an import"), std::string::npos)
      << last_error().message;
  // Left imported: shutdown gives the reference back.
  ASSERT_EQ(t->mem_import(dev, as_native(mem), 4096, 0, &p), XAL_SUCCESS);
  EXPECT_EQ(refs(mem), 2);
  ASSERT_EQ(instance.stop(), XAL_SUCCESS);
  EXPECT_EQ(refs(mem), 1);
  EXPECT_EQ(release_buffer(mem), CL_SUCCESS);
  EXPECT_EQ(refs(mem), -1);
}

TEST_F(OpenclFakeInterop, ImportRefusesWhatIsNotABufferOfTheContext) {
  start("two_platforms");
  cl_int rc = CL_SUCCESS;
  cl_mem mem = create_buffer(ctx, CL_MEM_READ_WRITE, 4096, nullptr, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  xal_devptr_t p = 0;
  // Not a cl_mem: the driver's code is kept.
  int not_a_buffer = 0;
  EXPECT_EQ(t->mem_import(dev, as_native(&not_a_buffer), 16, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, CL_INVALID_MEM_OBJECT);
  EXPECT_NE(last_error().message.find("not a live cl_mem"), std::string::npos)
      << last_error().message;
  // More bytes than the buffer has; the host flag.
  EXPECT_EQ(t->mem_import(dev, as_native(mem), 4097, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("4097 bytes asked of a buffer of 4096"), std::string::npos)
      << last_error().message;
  EXPECT_EQ(t->mem_import(dev, as_native(mem), 16, XAL_MEM_IMPORT_HOST, &p),
            XAL_ERROR_INVALID_ARGUMENT);
  // A buffer of the other platform's context (the other device).
  xal_bdevice_t* dev1 = nullptr;
  ASSERT_EQ(t->device_get(instance.get(), 1, &dev1), XAL_SUCCESS);
  EXPECT_EQ(t->mem_import(dev1, as_native(mem), 16, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("another context"), std::string::npos)
      << last_error().message;
  // Nothing was retained by the refusals.
  EXPECT_EQ(refs(mem), 1);
  EXPECT_EQ(release_buffer(mem), CL_SUCCESS);
  // A released buffer is no buffer.
  EXPECT_EQ(t->mem_import(dev, as_native(mem), 16, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, CL_INVALID_MEM_OBJECT);
}

TEST_F(OpenclFakeInterop, AnImportedQueueIsRetainedAndReleasedNotDestroyed) {
  start("gates");
  cl_int rc = CL_SUCCESS;
  cl_command_queue queue = create_queue(ctx, device_id, 0, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  xal_bstream_t* s = nullptr;
  ASSERT_EQ(t->stream_import(dev, as_native(queue), 0, &s), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(refs(queue), 2);
  xal_bevent_t* e = nullptr;
  ASSERT_EQ(t->event_create(dev, 0, &e), XAL_SUCCESS);
  ASSERT_EQ(t->event_record(e, s), XAL_SUCCESS) << last_error().message;
  ASSERT_EQ(t->stream_synchronize(s), XAL_SUCCESS) << last_error().message;
  ASSERT_EQ(t->event_destroy(e), XAL_SUCCESS);
  ASSERT_EQ(t->stream_destroy(s), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(refs(queue), 1);  // the caller's
  EXPECT_EQ(release_queue(queue), CL_SUCCESS);
}

TEST_F(OpenclFakeInterop, StreamImportRefusesWhatIsNotAnInOrderQueueOfTheDevice) {
  start("two_platforms");
  xal_bstream_t* s = nullptr;
  int not_a_queue = 0;
  EXPECT_EQ(t->stream_import(dev, as_native(&not_a_queue), 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, CL_INVALID_COMMAND_QUEUE);
  EXPECT_NE(last_error().message.find("not a live cl_command_queue"), std::string::npos)
      << last_error().message;
  cl_int rc = CL_SUCCESS;
  cl_command_queue unordered =
      create_queue(ctx, device_id, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  EXPECT_EQ(t->stream_import(dev, as_native(unordered), 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("out-of-order"), std::string::npos)
      << last_error().message;
  // A queue of device 0's context offered to device 1 (another context).
  cl_command_queue queue = create_queue(ctx, device_id, 0, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  xal_bdevice_t* dev1 = nullptr;
  ASSERT_EQ(t->device_get(instance.get(), 1, &dev1), XAL_SUCCESS);
  EXPECT_EQ(t->stream_import(dev1, as_native(queue), 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("another context"), std::string::npos)
      << last_error().message;
  EXPECT_EQ(refs(queue), 1);
  EXPECT_EQ(refs(unordered), 1);
  EXPECT_EQ(release_queue(queue), CL_SUCCESS);
  EXPECT_EQ(release_queue(unordered), CL_SUCCESS);
  // A released queue is no queue.
  EXPECT_EQ(t->stream_import(dev, as_native(queue), 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, CL_INVALID_COMMAND_QUEUE);
}

}  // namespace
}  // namespace xal::opencl::testing
