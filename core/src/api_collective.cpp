// The collectives: argument checks (handles, stream, dtype, op, root, and
// buffer ranges through the registry), then the communicator's path.
#include <cstring>

#include "comm.hpp"
#include "compute_share.hpp"
#include "xal_common/reduce.hpp"
#include "error.hpp"
#include "runtime.hpp"

using namespace xal::core;

namespace {

// The value of an enum parameter as the caller passed it, without loading
// it as the enum type (a C caller may pass any 32-bit value).
template <class E>
uint32_t raw_value(const E& e) {
  static_assert(sizeof(E) == sizeof(uint32_t));
  uint32_t v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Checks the communicator, the stream, the dtype and (optionally) the op.
xal_status_t check_call(xal_comm_t comm, xal_stream_t stream, const xal_dtype_t& dtype,
                        const xal_op_t* op, CommObj** out_c, StreamObj** out_s) {
  CommObj* c = as_comm(comm);
  if (!c) return bad_handle(comm, "comm");
  StreamObj* s = as_stream(stream);
  if (!s) return bad_handle(stream, "stream");
  if (s->device != c->device)
    return fail(c->device, XAL_ERROR_INVALID_ARGUMENT,
                cat("stream of device ", s->device->index,
                    " cannot run rank ", c->rank, " of a communicator on device ",
                    c->device->index));
  if (raw_value(dtype) >= XAL_DTYPE_COUNT)
    return fail(c->device, XAL_ERROR_INVALID_ARGUMENT,
                cat("dtype ", static_cast<int32_t>(raw_value(dtype)),
                    " is out of range"));
  if (op && raw_value(*op) >= XAL_OP_COUNT)
    return fail(c->device, XAL_ERROR_INVALID_ARGUMENT,
                cat("reduction op ", static_cast<int32_t>(raw_value(*op)),
                    " is out of range"));
  *out_c = c;
  *out_s = s;
  note_group_call(comm, stream);  // inside a group, its work checks them at the end
  return XAL_SUCCESS;
}

// Checks `elements` elements at `ptr` on the communicator's device.
xal_status_t check_buffer(CommObj* c, xal_devptr_t ptr, size_t elements,
                          xal_dtype_t dtype, const char* what) {
  if (elements == 0) return XAL_SUCCESS;
  const size_t es = xal::common::dtype_size(dtype);
  if (elements > SIZE_MAX / es)
    return fail(c->device, XAL_ERROR_INVALID_ARGUMENT,
                cat(what, ": ", elements, " elements overflow the address space"));
  return check_range(runtime(), c->device, ptr, elements * es, what);
}

void note_call(CommObj* c, size_t bytes) {
  c->device->state->counters.collective_calls.fetch_add(1, std::memory_order_relaxed);
  c->device->state->counters.collective_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

xal_status_t root_check(CommObj* c, uint32_t root) {
  if (root < c->size) return XAL_SUCCESS;
  return fail(c->device, XAL_ERROR_INVALID_ARGUMENT,
              cat("root ", root, " is out of range (communicator of ", c->size,
                  " ranks)"));
}

// The status of a collective of `c` queued on `s`; counted (`bytes`, the
// metrics) and traced (XAL_TRACE) only when it was queued.
xal_status_t queued(CommObj* c, size_t bytes, StreamObj* s, xal_status_t st,
                    const char* name, size_t count, xal_dtype_t dtype,
                    int32_t op = -1) {
  if (st != XAL_SUCCESS) return st;
  note_call(c, bytes);
  if (trace_on())
    trace::device_op(s, name,
                     {.bytes = count * xal::common::dtype_size(dtype),
                      .count = count,
                      .dtype = static_cast<int32_t>(dtype),
                      .op = op});
  return st;
}

size_t scaled(size_t count, uint32_t size) {
  return count > SIZE_MAX / (size ? size : 1) ? SIZE_MAX : count * size;
}

}  // namespace

extern "C" {

XAL_API xal_status_t xal_allreduce(xal_comm_t comm, xal_devptr_t send,
                                   xal_devptr_t recv, size_t count,
                                   xal_dtype_t dtype, xal_op_t op,
                                   xal_stream_t stream) {
  return entry("xal_allreduce", [&] {
    CommObj* c;
    StreamObj* s;
    if (xal_status_t r = check_call(comm, stream, dtype, &op, &c, &s); r) return r;
    if (xal_status_t r = check_buffer(c, send, count, dtype, "send"); r) return r;
    if (xal_status_t r = check_buffer(c, recv, count, dtype, "recv"); r) return r;
    const size_t bytes = count * xal::common::dtype_size(dtype);
    return queued(c, bytes, s, submit_shared(s, [&] {
                    return c->impl->allreduce(send, recv, count, dtype, op, s);
                  }),
                  "allreduce", count, dtype, op);
  });
}

XAL_API xal_status_t xal_broadcast(xal_comm_t comm, xal_devptr_t send,
                                   xal_devptr_t recv, size_t count,
                                   xal_dtype_t dtype, uint32_t root,
                                   xal_stream_t stream) {
  return entry("xal_broadcast", [&] {
    CommObj* c;
    StreamObj* s;
    if (xal_status_t r = check_call(comm, stream, dtype, nullptr, &c, &s); r) return r;
    if (xal_status_t r = root_check(c, root); r) return r;
    if (c->rank == root)
      if (xal_status_t r = check_buffer(c, send, count, dtype, "send"); r) return r;
    if (xal_status_t r = check_buffer(c, recv, count, dtype, "recv"); r) return r;
    const size_t bytes = count * xal::common::dtype_size(dtype);
    return queued(c, bytes, s, submit_shared(s, [&] {
                    return c->impl->broadcast(send, recv, count, dtype, root, s);
                  }),
                  "broadcast", count, dtype);
  });
}

XAL_API xal_status_t xal_reduce(xal_comm_t comm, xal_devptr_t send,
                                xal_devptr_t recv, size_t count,
                                xal_dtype_t dtype, xal_op_t op, uint32_t root,
                                xal_stream_t stream) {
  return entry("xal_reduce", [&] {
    CommObj* c;
    StreamObj* s;
    if (xal_status_t r = check_call(comm, stream, dtype, &op, &c, &s); r) return r;
    if (xal_status_t r = root_check(c, root); r) return r;
    if (xal_status_t r = check_buffer(c, send, count, dtype, "send"); r) return r;
    if (c->rank == root)
      if (xal_status_t r = check_buffer(c, recv, count, dtype, "recv"); r) return r;
    const size_t bytes = count * xal::common::dtype_size(dtype);
    return queued(c, bytes, s, submit_shared(s, [&] {
                    return c->impl->reduce(send, recv, count, dtype, op, root, s);
                  }),
                  "reduce", count, dtype, op);
  });
}

XAL_API xal_status_t xal_allgather(xal_comm_t comm, xal_devptr_t send,
                                   xal_devptr_t recv, size_t send_count,
                                   xal_dtype_t dtype, xal_stream_t stream) {
  return entry("xal_allgather", [&] {
    CommObj* c;
    StreamObj* s;
    if (xal_status_t r = check_call(comm, stream, dtype, nullptr, &c, &s); r) return r;
    if (xal_status_t r = check_buffer(c, send, send_count, dtype, "send"); r) return r;
    if (xal_status_t r = check_buffer(c, recv, scaled(send_count, c->size), dtype, "recv"); r)
      return r;
    const size_t bytes = send_count * xal::common::dtype_size(dtype);
    return queued(c, bytes, s, submit_shared(s, [&] {
                    return c->impl->allgather(send, recv, send_count, dtype, s);
                  }),
                  "allgather", send_count, dtype);
  });
}

XAL_API xal_status_t xal_reduce_scatter(xal_comm_t comm, xal_devptr_t send,
                                        xal_devptr_t recv, size_t recv_count,
                                        xal_dtype_t dtype, xal_op_t op,
                                        xal_stream_t stream) {
  return entry("xal_reduce_scatter", [&] {
    CommObj* c;
    StreamObj* s;
    if (xal_status_t r = check_call(comm, stream, dtype, &op, &c, &s); r) return r;
    if (xal_status_t r = check_buffer(c, send, scaled(recv_count, c->size), dtype, "send"); r)
      return r;
    if (xal_status_t r = check_buffer(c, recv, recv_count, dtype, "recv"); r) return r;
    const size_t bytes = recv_count * xal::common::dtype_size(dtype) * c->size;
    return queued(c, bytes, s, submit_shared(s, [&] {
                    return c->impl->reduce_scatter(send, recv, recv_count, dtype, op, s);
                  }),
                  "reduce_scatter", recv_count, dtype, op);
  });
}

XAL_API xal_status_t xal_alltoall(xal_comm_t comm, xal_devptr_t send,
                                  xal_devptr_t recv, size_t count,
                                  xal_dtype_t dtype, xal_stream_t stream) {
  return entry("xal_alltoall", [&] {
    CommObj* c;
    StreamObj* s;
    if (xal_status_t r = check_call(comm, stream, dtype, nullptr, &c, &s); r) return r;
    const size_t total = scaled(count, c->size);
    if (xal_status_t r = check_buffer(c, send, total, dtype, "send"); r) return r;
    if (xal_status_t r = check_buffer(c, recv, total, dtype, "recv"); r) return r;
    const size_t bytes = count * xal::common::dtype_size(dtype) * c->size;
    return queued(c, bytes, s, submit_shared(s, [&] {
                    return c->impl->alltoall(send, recv, count, dtype, s);
                  }),
                  "alltoall", count, dtype);
  });
}

}  // extern "C"
