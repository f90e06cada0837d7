// The one list of every OpenCL function the backend uses, as an X-macro:
// X(kind, name) with kind REQUIRED (the backend is UNAVAILABLE without it)
// or OPTIONAL (a feature is turned off without it: the last three, the
// imports of src/interop.cpp). dynamic_symbols.h
// expands it into the function-pointer table and the loader.
#pragma once

#define XAL_CL_SYMBOLS(X)                 \
  X(REQUIRED, clGetPlatformIDs)           \
  X(REQUIRED, clGetPlatformInfo)          \
  X(REQUIRED, clGetDeviceIDs)             \
  X(REQUIRED, clGetDeviceInfo)            \
  X(REQUIRED, clCreateContext)            \
  X(REQUIRED, clReleaseContext)           \
  X(REQUIRED, clCreateCommandQueue)       \
  X(REQUIRED, clRetainCommandQueue)       \
  X(REQUIRED, clReleaseCommandQueue)      \
  X(REQUIRED, clFlush)                    \
  X(REQUIRED, clFinish)                   \
  X(REQUIRED, clCreateBuffer)             \
  X(REQUIRED, clCreateSubBuffer)          \
  X(REQUIRED, clReleaseMemObject)         \
  X(REQUIRED, clEnqueueReadBuffer)        \
  X(REQUIRED, clEnqueueWriteBuffer)       \
  X(REQUIRED, clEnqueueCopyBuffer)        \
  X(REQUIRED, clEnqueueFillBuffer)        \
  X(REQUIRED, clEnqueueMapBuffer)         \
  X(REQUIRED, clEnqueueUnmapMemObject)    \
  X(REQUIRED, clEnqueueMarkerWithWaitList)  \
  X(REQUIRED, clEnqueueBarrierWithWaitList) \
  X(REQUIRED, clCreateUserEvent)          \
  X(REQUIRED, clSetUserEventStatus)       \
  X(REQUIRED, clSetEventCallback)         \
  X(REQUIRED, clWaitForEvents)            \
  X(REQUIRED, clGetEventInfo)             \
  X(REQUIRED, clGetEventProfilingInfo)    \
  X(REQUIRED, clRetainEvent)              \
  X(REQUIRED, clReleaseEvent)             \
  X(REQUIRED, clCreateProgramWithSource)  \
  X(REQUIRED, clBuildProgram)             \
  X(REQUIRED, clGetProgramBuildInfo)      \
  X(REQUIRED, clReleaseProgram)           \
  X(REQUIRED, clCreateKernel)             \
  X(REQUIRED, clReleaseKernel)            \
  X(REQUIRED, clSetKernelArg)             \
  X(REQUIRED, clGetKernelInfo)            \
  X(REQUIRED, clEnqueueNDRangeKernel)     \
  X(OPTIONAL, clGetKernelArgInfo)         \
  X(OPTIONAL, clCreateProgramWithIL)      \
  X(OPTIONAL, clGetMemObjectInfo)         \
  X(OPTIONAL, clRetainMemObject)          \
  X(OPTIONAL, clGetCommandQueueInfo)
