// Copies and fill, ordered on a stream's in-order queue.
#include "backend.h"
#include "entries.h"

#include <vector>

namespace xal::opencl {
namespace {

const xal_backend_services_t* services_of(const xal_bstream_s* stream) {
  return stream->device->backend->services;
}

// Submits what was enqueued so that it runs without a later synchronise.
xal_status_t flush(xal_bstream_s* stream, cl_int rc, const char* what, cl_event ev) {
  if (rc != CL_SUCCESS) return report_cl(services_of(stream), rc, what);
  remember(*stream, ev);
  rc = stream->device->backend->api().clFlush(stream->queue);
  if (rc != CL_SUCCESS) return report_cl(services_of(stream), rc, "clFlush");
  return XAL_SUCCESS;
}

}  // namespace

xal_status_t memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst, const void* src,
                         size_t bytes) {
  return guarded(services_of(stream), "memcpy_htod", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    const xal_backend_s& b = *stream->device->backend;
    Resolved r;
    xal_status_t st = resolve_or_report(b, stream->device->context, dst, bytes, "memcpy_htod", r);
    if (st != XAL_SUCCESS) return st;
    cl_event ev = nullptr;
    const cl_int rc = b.api().clEnqueueWriteBuffer(stream->queue, r.mem, CL_FALSE, r.offset,
                                                   bytes, src, 0, nullptr, &ev);
    return flush(stream, rc, "clEnqueueWriteBuffer", ev);
  });
}

xal_status_t memcpy_dtoh(xal_bstream_t* stream, void* dst, xal_devptr_t src, size_t bytes) {
  return guarded(services_of(stream), "memcpy_dtoh", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    const xal_backend_s& b = *stream->device->backend;
    Resolved r;
    xal_status_t st = resolve_or_report(b, stream->device->context, src, bytes, "memcpy_dtoh", r);
    if (st != XAL_SUCCESS) return st;
    cl_event ev = nullptr;
    const cl_int rc = b.api().clEnqueueReadBuffer(stream->queue, r.mem, CL_FALSE, r.offset,
                                                  bytes, dst, 0, nullptr, &ev);
    return flush(stream, rc, "clEnqueueReadBuffer", ev);
  });
}

xal_status_t memcpy_dtod(xal_bstream_t* stream, xal_devptr_t dst, xal_devptr_t src,
                         size_t bytes) {
  return guarded(services_of(stream), "memcpy_dtod", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    const xal_backend_s& b = *stream->device->backend;
    Resolved d, sr;
    xal_status_t st = resolve_or_report(b, stream->device->context, dst, bytes, "memcpy_dtod", d);
    if (st == XAL_SUCCESS) {
      st = resolve_or_report(b, stream->device->context, src, bytes, "memcpy_dtod", sr);
    }
    if (st != XAL_SUCCESS) return st;
    cl_event ev = nullptr;
    const cl_int rc = b.api().clEnqueueCopyBuffer(stream->queue, sr.mem, d.mem, sr.offset,
                                                  d.offset, bytes, 0, nullptr, &ev);
    return flush(stream, rc, "clEnqueueCopyBuffer", ev);
  });
}

xal_status_t memcpy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device, xal_devptr_t dst,
                         xal_bdevice_t* src_device, xal_devptr_t src, size_t bytes) {
  const xal_backend_services_t* s = services_of(stream);
  return guarded(s, "memcpy_peer", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    if (dst_device->context == stream->device->context &&
        src_device->context == stream->device->context) {
      // One context: buffers are usable on every device of it.
      return memcpy_dtod(stream, dst, src, bytes);
    }
    // Two platforms: stage through host memory, in order on the stream.
    const xal_backend_s& b = *stream->device->backend;
    const ClApi& api = b.api();
    Resolved d, sr;
    xal_status_t st = resolve_or_report(b, dst_device->context, dst, bytes, "memcpy_peer", d);
    if (st == XAL_SUCCESS) {
      st = resolve_or_report(b, src_device->context, src, bytes, "memcpy_peer", sr);
    }
    if (st != XAL_SUCCESS) return st;
    const bool on_src = src_device->context == stream->device->context;
    cl_command_queue read_q = on_src ? stream->queue : src_device->internal_queue;
    cl_command_queue write_q = on_src ? dst_device->internal_queue : stream->queue;
    if (!on_src) {
      const cl_int rc = api.clFinish(stream->queue);
      if (rc != CL_SUCCESS) return report_cl(s, rc, "clFinish");
    }
    std::vector<unsigned char> staging(bytes);
    cl_int rc = api.clEnqueueReadBuffer(read_q, sr.mem, CL_TRUE, sr.offset, bytes,
                                        staging.data(), 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clEnqueueReadBuffer", "peer copy source");
    rc = api.clEnqueueWriteBuffer(write_q, d.mem, CL_TRUE, d.offset, bytes, staging.data(), 0,
                                  nullptr, nullptr);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clEnqueueWriteBuffer", "peer copy target");
    return XAL_SUCCESS;
  });
}

xal_status_t memset_bytes(xal_bstream_t* stream, xal_devptr_t dst, uint8_t value,
                          size_t bytes) {
  return guarded(services_of(stream), "memset", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    const xal_backend_s& b = *stream->device->backend;
    Resolved r;
    xal_status_t st = resolve_or_report(b, stream->device->context, dst, bytes, "memset", r);
    if (st != XAL_SUCCESS) return st;
    const cl_uchar pattern = value;
    cl_event ev = nullptr;
    const cl_int rc = b.api().clEnqueueFillBuffer(stream->queue, r.mem, &pattern,
                                                  sizeof(pattern), r.offset, bytes, 0,
                                                  nullptr, &ev);
    return flush(stream, rc, "clEnqueueFillBuffer", ev);
  });
}

}  // namespace xal::opencl
