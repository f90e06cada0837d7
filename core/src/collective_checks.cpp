// Argument checks shared by the collective entry points (see
// collective_checks.hpp).
#include "collective_checks.hpp"

#include <cstring>

#include "comm.hpp"
#include "error.hpp"
#include "trace.hpp"
#include "xal_common/reduce.hpp"

namespace xal::core {

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
                    int32_t op) {
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


}  // namespace xal::core
