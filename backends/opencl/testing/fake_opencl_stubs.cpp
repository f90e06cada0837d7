// The rest of the fake OpenCL library: every function of symbols.h that
// fake_opencl.cpp does not implement, as a stub that fails. Generated from
// the backend's own list so that the fake always has every symbol.
#include <cstdint>

// Implemented for real in fake_opencl.cpp: renamed out of the way here.
#define clGetPlatformIDs xal_fake_unused_clGetPlatformIDs
#define clGetPlatformInfo xal_fake_unused_clGetPlatformInfo
#define clGetDeviceIDs xal_fake_unused_clGetDeviceIDs
#define clGetDeviceInfo xal_fake_unused_clGetDeviceInfo
#define clCreateContext xal_fake_unused_clCreateContext
#define clReleaseContext xal_fake_unused_clReleaseContext
#define clCreateCommandQueue xal_fake_unused_clCreateCommandQueue
#define clRetainCommandQueue xal_fake_unused_clRetainCommandQueue
#define clReleaseCommandQueue xal_fake_unused_clReleaseCommandQueue
#define clFinish xal_fake_unused_clFinish
#define clFlush xal_fake_unused_clFlush
#define clEnqueueMarkerWithWaitList xal_fake_unused_clEnqueueMarkerWithWaitList
#define clEnqueueBarrierWithWaitList xal_fake_unused_clEnqueueBarrierWithWaitList
#define clRetainEvent xal_fake_unused_clRetainEvent
#define clReleaseEvent xal_fake_unused_clReleaseEvent
#define clGetEventInfo xal_fake_unused_clGetEventInfo
#define clWaitForEvents xal_fake_unused_clWaitForEvents
#define clCreateUserEvent xal_fake_unused_clCreateUserEvent
#define clSetUserEventStatus xal_fake_unused_clSetUserEventStatus
#define clSetEventCallback xal_fake_unused_clSetEventCallback
#define clCreateBuffer xal_fake_unused_clCreateBuffer
#define clReleaseMemObject xal_fake_unused_clReleaseMemObject
#define clEnqueueReadBuffer xal_fake_unused_clEnqueueReadBuffer
#define clEnqueueWriteBuffer xal_fake_unused_clEnqueueWriteBuffer
#define clEnqueueCopyBuffer xal_fake_unused_clEnqueueCopyBuffer
#define clRetainMemObject xal_fake_unused_clRetainMemObject
#define clGetMemObjectInfo xal_fake_unused_clGetMemObjectInfo
#define clGetCommandQueueInfo xal_fake_unused_clGetCommandQueueInfo

#include "symbols.h"

// CL_INVALID_OPERATION; callers ignore the arguments they passed.
#define XAL_FAKE_STUB(kind, name, since) \
  extern "C" __attribute__((visibility("default"))) int32_t name() { return -59; }
XAL_CL_SYMBOLS(XAL_FAKE_STUB)
