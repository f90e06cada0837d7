// xal's own kernels (src/kernels/*.cl, embedded at build time) and the
// "xal_opencl_reduce_v1" extension that runs them.
#include "backend.h"
#include "entries.h"
#include "xal_opencl.h"

#include <cstring>
#include <string>

namespace xal::opencl {

extern const char* const kReduceKernelSource;

namespace {

constexpr const char* kDtypeNames[XAL_DTYPE_COUNT] = {"i8",  "u8",  "i32", "u32", "i64",
                                                      "u64", "f16", "bf16", "f32", "f64"};
constexpr size_t kDtypeSizes[XAL_DTYPE_COUNT] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
constexpr const char* kOpNames[] = {"sum", "prod", "min", "max"};

// The built-in kernel `name` of `device`; needs builtin_mutex held.
xal_status_t builtin_kernel(xal_bdevice_s& device, const std::string& name, cl_kernel& out) {
  const ClApi& api = device.backend->api();
  const xal_backend_services_t* s = device.backend->services;
  auto found = device.builtin_kernels.find(name);
  if (found != device.builtin_kernels.end()) {
    out = found->second;
    return XAL_SUCCESS;
  }
  cl_int rc = CL_SUCCESS;
  if (device.builtin_program == nullptr) {
    const char* src = kReduceKernelSource;
    const size_t length = std::strlen(src);
    cl_program program = api.clCreateProgramWithSource(device.context, 1, &src, &length, &rc);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clCreateProgramWithSource", "xal kernels");
    const xal_status_t st = build_program(device, program, "xal's reduction kernels");
    if (st != XAL_SUCCESS) {
      api.clReleaseProgram(program);
      return st;
    }
    device.builtin_program = program;
  }
  cl_kernel k = api.clCreateKernel(device.builtin_program, name.c_str(), &rc);
  if (rc != CL_SUCCESS) return report_cl(s, rc, "clCreateKernel", name);
  device.builtin_kernels.emplace(name, k);
  out = k;
  return XAL_SUCCESS;
}

// Checks dtype, resolves [ptr, ptr+count*size) and gives its element offset.
xal_status_t element_range(xal_bstream_s& stream, xal_devptr_t ptr, size_t count,
                           uint32_t dtype, const char* op, Resolved& r, cl_ulong& offset) {
  const xal_backend_services_t* s = stream.device->backend->services;
  const size_t es = kDtypeSizes[dtype];
  if (count > SIZE_MAX / es) return report(s, XAL_ERROR_INVALID_ARGUMENT, std::string(op) + ": count overflows");
  const xal_status_t st =
      resolve_or_report(*stream.device->backend, stream.device->context, ptr, count * es, op, r);
  if (st != XAL_SUCCESS) return st;
  if (r.offset % es != 0) {
    return report(s, XAL_ERROR_INVALID_ARGUMENT,
                  std::string(op) + ": address is not aligned to its " + std::to_string(es) +
                      "-byte elements");
  }
  offset = r.offset / es;
  return XAL_SUCCESS;
}

xal_status_t check_dtype(const xal_backend_services_t* s, const xal_bdevice_s& device,
                         uint32_t dtype, const char* op) {
  if (dtype >= XAL_DTYPE_COUNT) {
    return report(s, XAL_ERROR_INVALID_ARGUMENT, std::string(op) + ": unknown dtype");
  }
  if (dtype == XAL_DTYPE_F64 && !device.info.has_extension("cl_khr_fp64")) {
    return report(s, XAL_ERROR_NOT_SUPPORTED,
                  std::string(op) + ": '" + device.info.name + "' has no cl_khr_fp64");
  }
  return XAL_SUCCESS;
}

template <typename... Args>
xal_status_t launch(xal_bstream_s& stream, cl_kernel k, size_t count, const Args&... args) {
  const ClApi& api = stream.device->backend->api();
  const xal_backend_services_t* s = stream.device->backend->services;
  cl_uint index = 0;
  cl_int rc = CL_SUCCESS;
  ((rc = rc == CL_SUCCESS ? api.clSetKernelArg(k, index++, sizeof(Args), &args) : rc), ...);
  if (rc != CL_SUCCESS) return report_cl(s, rc, "clSetKernelArg", "xal kernel");
  const size_t global = count;
  rc = submit(stream, [&](cl_event* ev) {
    return api.clEnqueueNDRangeKernel(stream.queue, k, 1, nullptr, &global, nullptr, 0, nullptr,
                                      ev);
  });
  if (rc != CL_SUCCESS) return report_cl(s, rc, "clEnqueueNDRangeKernel", "xal kernel");
  rc = api.clFlush(stream.queue);
  return rc == CL_SUCCESS ? XAL_SUCCESS : report_cl(s, rc, "clFlush");
}

xal_status_t reduce(xal_bstream_t* stream, xal_devptr_t dst, xal_devptr_t src, size_t count,
                    uint32_t dtype, uint32_t op) {
  const xal_backend_services_t* s = stream->device->backend->services;
  return guarded(Entry{s}, "opencl reduce", [&]() -> xal_status_t {
    xal_status_t st = check_dtype(s, *stream->device, dtype, "reduce");
    if (st != XAL_SUCCESS) return st;
    if (op > XAL_OP_MAX) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    "reduce: op must be SUM, PROD, MIN or MAX (AVG: SUM, then divide)");
    }
    if (count == 0) return XAL_SUCCESS;
    Resolved d, r;
    cl_ulong d_off = 0, s_off = 0;
    st = element_range(*stream, dst, count, dtype, "reduce", d, d_off);
    if (st == XAL_SUCCESS) st = element_range(*stream, src, count, dtype, "reduce", r, s_off);
    if (st != XAL_SUCCESS) return st;
    const std::string name =
        std::string("xal_reduce_") + kOpNames[op] + "_" + kDtypeNames[dtype];
    std::lock_guard lock(stream->device->builtin_mutex);
    cl_kernel k = nullptr;
    st = builtin_kernel(*stream->device, name, k);
    if (st != XAL_SUCCESS) return st;
    return launch(*stream, k, count, d.mem, d_off, r.mem, s_off, static_cast<cl_ulong>(count));
  });
}

xal_status_t divide(xal_bstream_t* stream, xal_devptr_t dst, size_t count, uint32_t dtype,
                    uint32_t divisor) {
  const xal_backend_services_t* s = stream->device->backend->services;
  return guarded(Entry{s}, "opencl divide", [&]() -> xal_status_t {
    xal_status_t st = check_dtype(s, *stream->device, dtype, "divide");
    if (st != XAL_SUCCESS) return st;
    if (divisor == 0) return report(s, XAL_ERROR_INVALID_ARGUMENT, "divide: divisor is 0");
    if (count == 0) return XAL_SUCCESS;
    Resolved d;
    cl_ulong d_off = 0;
    st = element_range(*stream, dst, count, dtype, "divide", d, d_off);
    if (st != XAL_SUCCESS) return st;
    const std::string name = std::string("xal_divide_") + kDtypeNames[dtype];
    std::lock_guard lock(stream->device->builtin_mutex);
    cl_kernel k = nullptr;
    st = builtin_kernel(*stream->device, name, k);
    if (st != XAL_SUCCESS) return st;
    const cl_uint div = divisor;
    return launch(*stream, k, count, d.mem, d_off, static_cast<cl_ulong>(count), div);
  });
}

const xal_opencl_reduce_v1_t kReduceExtension = {sizeof(xal_opencl_reduce_v1_t), reduce, divide};

}  // namespace

const void* get_extension(xal_backend_t* backend, const char* name) {
  (void)backend;
  if (name != nullptr && std::strcmp(name, XAL_OPENCL_REDUCE_EXTENSION) == 0) {
    return &kReduceExtension;
  }
  if (name != nullptr && std::strcmp(name, XAL_OPENCL_NATIVE_EXTENSION) == 0) {
    return native_extension();
  }
  return nullptr;
}

}  // namespace xal::opencl
