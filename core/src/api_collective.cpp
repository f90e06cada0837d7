// The collectives: argument checks (handles, stream, dtype, op, root, and
// buffer ranges through the registry), then the communicator's path.
#include <cstring>

#include "collective_checks.hpp"
#include "comm.hpp"
#include "compute_share.hpp"
#include "xal_common/reduce.hpp"
#include "error.hpp"
#include "runtime.hpp"

using namespace xal::core;


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
