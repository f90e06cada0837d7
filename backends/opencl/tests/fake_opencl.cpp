// A fake OpenCL library for the init error paths, loaded through
// XAL_OPENCL_LIBRARY in place of libOpenCL.so.1. XAL_FAKE_OPENCL_MODE picks
// what it reports:
//   no_platform    clGetPlatformIDs: CL_PLATFORM_NOT_FOUND_KHR
//   no_device      one platform "Fake Platform" without devices
//   context_fails  one GPU device; clCreateContext: CL_OUT_OF_HOST_MEMORY
// Every other function (fake_opencl_stubs.cpp) returns CL_INVALID_OPERATION.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <cstdlib>
#include <cstring>
#include <string>

#define FAKE_EXPORT __attribute__((visibility("default")))

namespace {

std::string mode() {
  const char* m = std::getenv("XAL_FAKE_OPENCL_MODE");
  return m != nullptr ? m : "";
}

// Fake handles: addresses of statics, never dereferenced by the caller.
int g_platform;
int g_device;

cl_int put_string(const char* text, size_t size, void* value, size_t* size_ret) {
  const size_t n = std::strlen(text) + 1;
  if (size_ret != nullptr) *size_ret = n;
  if (value != nullptr) {
    if (size < n) return CL_INVALID_VALUE;
    std::memcpy(value, text, n);
  }
  return CL_SUCCESS;
}

template <typename T>
cl_int put_value(T v, size_t size, void* value, size_t* size_ret) {
  if (size_ret != nullptr) *size_ret = sizeof(T);
  if (value != nullptr) {
    if (size < sizeof(T)) return CL_INVALID_VALUE;
    std::memcpy(value, &v, sizeof(T));
  }
  return CL_SUCCESS;
}

}  // namespace

extern "C" {

FAKE_EXPORT cl_int CL_API_CALL clGetPlatformIDs(cl_uint n, cl_platform_id* out,
                                                cl_uint* count) {
  if (mode() == "no_platform") return CL_PLATFORM_NOT_FOUND_KHR;
  if (count != nullptr) *count = 1;
  if (out != nullptr && n > 0) out[0] = reinterpret_cast<cl_platform_id>(&g_platform);
  return CL_SUCCESS;
}

FAKE_EXPORT cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id, cl_platform_info param,
                                                 size_t size, void* value, size_t* size_ret) {
  switch (param) {
    case CL_PLATFORM_NAME: return put_string("Fake Platform", size, value, size_ret);
    case CL_PLATFORM_VENDOR: return put_string("xal tests", size, value, size_ret);
    case CL_PLATFORM_VERSION: return put_string("OpenCL 1.2 fake", size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

FAKE_EXPORT cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id, cl_device_type, cl_uint n,
                                              cl_device_id* out, cl_uint* count) {
  if (mode() == "no_device") return CL_DEVICE_NOT_FOUND;
  if (count != nullptr) *count = 1;
  if (out != nullptr && n > 0) out[0] = reinterpret_cast<cl_device_id>(&g_device);
  return CL_SUCCESS;
}

FAKE_EXPORT cl_int CL_API_CALL clGetDeviceInfo(cl_device_id, cl_device_info param, size_t size,
                                               void* value, size_t* size_ret) {
  switch (param) {
    case CL_DEVICE_NAME: return put_string("Fake GPU", size, value, size_ret);
    case CL_DEVICE_VENDOR: return put_string("xal tests", size, value, size_ret);
    case CL_DEVICE_VERSION: return put_string("OpenCL 1.2", size, value, size_ret);
    case CL_DRIVER_VERSION: return put_string("0.1", size, value, size_ret);
    case CL_DEVICE_EXTENSIONS: return put_string("", size, value, size_ret);
    case CL_DEVICE_TYPE: return put_value<cl_device_type>(CL_DEVICE_TYPE_GPU, size, value, size_ret);
    case CL_DEVICE_MAX_COMPUTE_UNITS: return put_value<cl_uint>(8, size, value, size_ret);
    case CL_DEVICE_MAX_CLOCK_FREQUENCY: return put_value<cl_uint>(1000, size, value, size_ret);
    case CL_DEVICE_GLOBAL_MEM_SIZE: return put_value<cl_ulong>(1ull << 30, size, value, size_ret);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE: return put_value<cl_ulong>(1ull << 28, size, value, size_ret);
    case CL_DEVICE_MEM_BASE_ADDR_ALIGN: return put_value<cl_uint>(1024, size, value, size_ret);
    case CL_DEVICE_QUEUE_PROPERTIES:
      return put_value<cl_command_queue_properties>(CL_QUEUE_PROFILING_ENABLE, size, value,
                                                    size_ret);
    default: return CL_INVALID_VALUE;
  }
}

FAKE_EXPORT cl_context CL_API_CALL clCreateContext(const cl_context_properties*, cl_uint,
                                                   const cl_device_id*,
                                                   void(CL_CALLBACK*)(const char*, const void*,
                                                                      size_t, void*),
                                                   void*, cl_int* rc) {
  if (rc != nullptr) *rc = CL_OUT_OF_HOST_MEMORY;
  return nullptr;
}

}  // extern "C"
