// The one list of every OpenCL function the backend uses, as an X-macro of
// entries X(KIND, name, since):
//   KIND   REQUIRED (the backend is UNAVAILABLE without it) or OPTIONAL (a
//          feature is turned off without it: the last five, kernel argument
//          checks, SPIR-V programs and the imports of src/interop.cpp);
//   since  the OpenCL version that introduced the function, as the
//          CL_TARGET_OPENCL_VERSION numbers spell it (100, 110, 120, 200,
//          210, 300), from the CL_API_SUFFIX__VERSION_x_y of CL/cl.h.
// The function types are those of CL/cl.h (cl_headers.h); dynamic_symbols.h
// expands the list into the function-pointer table and the loader.
#pragma once

#include <cstdint>
#include <string>

#define XAL_CL_SYMBOLS(X)                          \
  X(REQUIRED, clGetPlatformIDs, 100)               \
  X(REQUIRED, clGetPlatformInfo, 100)              \
  X(REQUIRED, clGetDeviceIDs, 100)                 \
  X(REQUIRED, clGetDeviceInfo, 100)                \
  X(REQUIRED, clCreateContext, 100)                \
  X(REQUIRED, clReleaseContext, 100)               \
  X(REQUIRED, clCreateCommandQueue, 100)           \
  X(REQUIRED, clRetainCommandQueue, 100)           \
  X(REQUIRED, clReleaseCommandQueue, 100)          \
  X(REQUIRED, clFlush, 100)                        \
  X(REQUIRED, clFinish, 100)                       \
  X(REQUIRED, clCreateBuffer, 100)                 \
  X(REQUIRED, clCreateSubBuffer, 110)              \
  X(REQUIRED, clReleaseMemObject, 100)             \
  X(REQUIRED, clEnqueueReadBuffer, 100)            \
  X(REQUIRED, clEnqueueWriteBuffer, 100)           \
  X(REQUIRED, clEnqueueCopyBuffer, 100)            \
  X(REQUIRED, clEnqueueFillBuffer, 120)            \
  X(REQUIRED, clEnqueueMapBuffer, 100)             \
  X(REQUIRED, clEnqueueUnmapMemObject, 100)        \
  X(REQUIRED, clEnqueueMarkerWithWaitList, 120)    \
  X(REQUIRED, clEnqueueBarrierWithWaitList, 120)   \
  X(REQUIRED, clCreateUserEvent, 110)              \
  X(REQUIRED, clSetUserEventStatus, 110)           \
  X(REQUIRED, clSetEventCallback, 110)             \
  X(REQUIRED, clWaitForEvents, 100)                \
  X(REQUIRED, clGetEventInfo, 100)                 \
  X(REQUIRED, clGetEventProfilingInfo, 100)        \
  X(REQUIRED, clRetainEvent, 100)                  \
  X(REQUIRED, clReleaseEvent, 100)                 \
  X(REQUIRED, clCreateProgramWithSource, 100)      \
  X(REQUIRED, clBuildProgram, 100)                 \
  X(REQUIRED, clGetProgramBuildInfo, 100)          \
  X(REQUIRED, clReleaseProgram, 100)               \
  X(REQUIRED, clCreateKernel, 100)                 \
  X(REQUIRED, clReleaseKernel, 100)                \
  X(REQUIRED, clSetKernelArg, 100)                 \
  X(REQUIRED, clGetKernelInfo, 100)                \
  X(REQUIRED, clEnqueueNDRangeKernel, 100)         \
  X(OPTIONAL, clGetKernelArgInfo, 120)             \
  X(OPTIONAL, clCreateProgramWithIL, 210)          \
  X(OPTIONAL, clGetMemObjectInfo, 100)             \
  X(OPTIONAL, clRetainMemObject, 100)              \
  X(OPTIONAL, clGetCommandQueueInfo, 100)

namespace xal::opencl {

// OpenCL's first release: a library without a function it had is no
// complete OpenCL at all, and the reason names no version.
constexpr int64_t kOpenClFirstRelease = 100;

// "OpenCL 2.1" for 210.
inline std::string opencl_version_text(int64_t since) {
  return "OpenCL " + std::to_string(since / 100) + "." +
         std::to_string(since / 10 % 10);
}

}  // namespace xal::opencl
