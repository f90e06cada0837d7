#include "table_harness.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace xal::opencl::testing {
namespace {

thread_local RecordedError t_error;

xal_status_t set_error(xal_status_t status, int64_t vendor_code, const char* vendor_name,
                       const char* message) {
  t_error.status = status;
  t_error.vendor_code = vendor_code;
  t_error.vendor_name = vendor_name != nullptr ? vendor_name : "";
  t_error.message = message != nullptr ? message : "";
  return status;
}

void log(int level, const char* backend, const char* message) {
  if (level <= XAL_LOG_WARNING) std::fprintf(stderr, "[%s] %s\n", backend, message);
}

xal_status_t load_backend(const char*, const xal_backend_table_t**, char*, size_t) {
  return XAL_ERROR_NOT_SUPPORTED;
}

const char* get_config(const char* key) { return std::getenv(key); }

const xal_backend_services_t kServices = {sizeof(xal_backend_services_t), XAL_ABI_VERSION,
                                          set_error, log, load_backend, get_config};

}  // namespace

RecordedError& last_error() { return t_error; }

const xal_backend_services_t* test_services() { return &kServices; }

const xal_backend_table_t* plugin_table() {
  static void* handle = dlopen(XAL_OPENCL_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    ADD_FAILURE() << "cannot load " << XAL_OPENCL_PLUGIN << ": " << dlerror();
    return nullptr;
  }
  auto get = reinterpret_cast<xal_backend_get_fn>(dlsym(handle, XAL_BACKEND_ENTRY_SYMBOL));
  if (get == nullptr) {
    ADD_FAILURE() << "no " << XAL_BACKEND_ENTRY_SYMBOL << " in " << XAL_OPENCL_PLUGIN;
    return nullptr;
  }
  return get(XAL_ABI_VERSION);
}

Instance::~Instance() { stop(); }

xal_status_t Instance::stop() {
  xal_backend_t* backend = backend_;
  backend_ = nullptr;
  return backend != nullptr ? plugin_table()->shutdown(backend) : XAL_SUCCESS;
}

xal_status_t Instance::start() {
  const xal_backend_init_args_t args = {sizeof(xal_backend_init_args_t), test_services(),
                                        nullptr};
  return plugin_table()->init(&args, &backend_);
}

void OpenclTable::SetUp() {
  t = plugin_table();
  ASSERT_NE(t, nullptr);
  const xal_status_t st = instance.start();
  if (st == XAL_ERROR_BACKEND_UNAVAILABLE) {
    GTEST_SKIP() << "no OpenCL platform/device here: " << last_error().message;
    return;
  }
  ASSERT_EQ(st, XAL_SUCCESS) << last_error().message;
  ASSERT_EQ(t->device_get(instance.get(), 0, &dev), XAL_SUCCESS);
  ASSERT_EQ(t->stream_create(dev, 0, &stream), XAL_SUCCESS) << last_error().message;
}

void OpenclTable::TearDown() {
  if (stream != nullptr) {
    EXPECT_EQ(t->stream_destroy(stream), XAL_SUCCESS);
  }
}

}  // namespace xal::opencl::testing
