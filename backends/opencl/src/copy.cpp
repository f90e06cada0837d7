// Copies and fill, ordered on a stream's in-order queue.
#include "backend.h"
#include "entries.h"

#include <algorithm>
#include <vector>

namespace xal::opencl {
namespace {

const xal_backend_services_t* services_of(const xal_bstream_s* stream) {
  return stream->device->backend->services;
}

// Submits what was enqueued so that it runs without a later synchronise.
xal_status_t flush(xal_bstream_s* stream, cl_int rc, const char* what) {
  if (rc != CL_SUCCESS) return report_cl(services_of(stream), rc, what);
  rc = stream->device->backend->api().clFlush(stream->queue);
  if (rc != CL_SUCCESS) return report_cl(services_of(stream), rc, "clFlush");
  return XAL_SUCCESS;
}

// Overlapping copies that take at most this many pieces are split into
// pieces that do not overlap; others are staged through a temporary buffer.
constexpr size_t kMaxOverlapPieces = 16;

// Copies [src, src+bytes) to [dst, dst+bytes) of one buffer, ranges that
// overlap (dst != src), as pieces of |dst - src| bytes, each of which
// reads what no earlier piece has written: from the low end when copying
// down, from the high end when copying up. The queue is in order.
cl_int copy_in_pieces(xal_bstream_s& stream, cl_mem mem, size_t src, size_t dst, size_t bytes) {
  const ClApi& api = stream.device->backend->api();
  const size_t step = dst > src ? dst - src : src - dst;
  // Every piece keeps its event: when a later one fails to enqueue, those
  // already enqueued still run and are the stream's pending work.
  return submit(stream, [&](CommandLog::Batch& batch) {
    cl_int rc = CL_SUCCESS;
    size_t done = 0;
    while (rc == CL_SUCCESS && done < bytes) {
      const size_t len = std::min(step, bytes - done);
      const size_t at = dst < src ? done : bytes - done - len;
      done += len;
      rc = api.clEnqueueCopyBuffer(stream.queue, mem, mem, src + at, dst + at, len, 0, nullptr,
                                   batch.next());
    }
    return rc;
  });
}

}  // namespace

xal_status_t memcpy_htod(xal_bstream_t* stream, xal_devptr_t dst, const void* src,
                         size_t bytes) {
  return guarded(Entry{services_of(stream)}, "memcpy_htod", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    const xal_backend_s& b = *stream->device->backend;
    Resolved r;
    xal_status_t st = resolve_or_report(b, stream->device->context, dst, bytes, "memcpy_htod", r);
    if (st != XAL_SUCCESS) return st;
    const cl_int rc = submit(*stream, [&](cl_event* ev) {
      return b.api().clEnqueueWriteBuffer(stream->queue, r.mem, CL_FALSE, r.offset, bytes, src,
                                          0, nullptr, ev);
    });
    return flush(stream, rc, "clEnqueueWriteBuffer");
  });
}

xal_status_t memcpy_dtoh(xal_bstream_t* stream, void* dst, xal_devptr_t src, size_t bytes) {
  return guarded(Entry{services_of(stream)}, "memcpy_dtoh", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    const xal_backend_s& b = *stream->device->backend;
    Resolved r;
    xal_status_t st = resolve_or_report(b, stream->device->context, src, bytes, "memcpy_dtoh", r);
    if (st != XAL_SUCCESS) return st;
    const cl_int rc = submit(*stream, [&](cl_event* ev) {
      return b.api().clEnqueueReadBuffer(stream->queue, r.mem, CL_FALSE, r.offset, bytes, dst,
                                         0, nullptr, ev);
    });
    return flush(stream, rc, "clEnqueueReadBuffer");
  });
}

xal_status_t memcpy_dtod(xal_bstream_t* stream, xal_devptr_t dst, xal_devptr_t src,
                         size_t bytes) {
  return guarded(Entry{services_of(stream)}, "memcpy_dtod", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    const xal_backend_s& b = *stream->device->backend;
    Resolved d, sr;
    xal_status_t st = resolve_or_report(b, stream->device->context, dst, bytes, "memcpy_dtod", d);
    if (st == XAL_SUCCESS) {
      st = resolve_or_report(b, stream->device->context, src, bytes, "memcpy_dtod", sr);
    }
    if (st != XAL_SUCCESS) return st;
    if (d.mem == sr.mem && d.offset == sr.offset) return XAL_SUCCESS;  // onto itself
    const ClApi& api = b.api();
    const bool overlap = d.mem == sr.mem && d.offset < sr.offset + bytes &&
                         sr.offset < d.offset + bytes;
    if (!overlap) {
      const cl_int rc = submit(*stream, [&](cl_event* ev) {
        return api.clEnqueueCopyBuffer(stream->queue, sr.mem, d.mem, sr.offset, d.offset, bytes,
                                       0, nullptr, ev);
      });
      return flush(stream, rc, "clEnqueueCopyBuffer");
    }
    // OpenCL refuses overlapping ranges (CL_MEM_COPY_OVERLAP).
    const size_t distance = d.offset > sr.offset ? d.offset - sr.offset : sr.offset - d.offset;
    if ((bytes + distance - 1) / distance <= kMaxOverlapPieces) {
      return flush(stream, copy_in_pieces(*stream, d.mem, sr.offset, d.offset, bytes),
                   "clEnqueueCopyBuffer");
    }
    cl_int rc = CL_SUCCESS;
    cl_mem staging = api.clCreateBuffer(stream->device->context, CL_MEM_READ_WRITE, bytes,
                                        nullptr, &rc);
    if (rc != CL_SUCCESS) {
      return report_cl(services_of(stream), rc, "clCreateBuffer", "staging an overlapping copy");
    }
    rc = submit(*stream, [&](CommandLog::Batch& batch) {
      cl_int r = api.clEnqueueCopyBuffer(stream->queue, sr.mem, staging, sr.offset, 0, bytes, 0,
                                         nullptr, batch.next());
      if (r == CL_SUCCESS) {
        r = api.clEnqueueCopyBuffer(stream->queue, staging, d.mem, 0, d.offset, bytes, 0,
                                    nullptr, batch.next());
      }
      return r;
    });
    // Freed by OpenCL once the copies are done.
    stream->device->backend->releases().release(api, staging);
    return flush(stream, rc, "clEnqueueCopyBuffer");
  });
}

xal_status_t memcpy_peer(xal_bstream_t* stream, xal_bdevice_t* dst_device, xal_devptr_t dst,
                         xal_bdevice_t* src_device, xal_devptr_t src, size_t bytes) {
  const xal_backend_services_t* s = services_of(stream);
  return guarded(Entry{s}, "memcpy_peer", [&]() -> xal_status_t {
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

xal_status_t memset(xal_bstream_t* stream, xal_devptr_t dst, uint8_t value,
                          size_t bytes) {
  return guarded(Entry{services_of(stream)}, "memset", [&]() -> xal_status_t {
    if (bytes == 0) return XAL_SUCCESS;
    const xal_backend_s& b = *stream->device->backend;
    Resolved r;
    xal_status_t st = resolve_or_report(b, stream->device->context, dst, bytes, "memset", r);
    if (st != XAL_SUCCESS) return st;
    const cl_uchar pattern = value;
    const cl_int rc = submit(*stream, [&](cl_event* ev) {
      return b.api().clEnqueueFillBuffer(stream->queue, r.mem, &pattern, sizeof(pattern),
                                         r.offset, bytes, 0, nullptr, ev);
    });
    return flush(stream, rc, "clEnqueueFillBuffer");
  });
}

}  // namespace xal::opencl
