// The v-collectives and gather/scatter (ABI 1.1): argument checks, then a
// point-to-point batch of the communicator's path (vcollectives.hpp).
#include <string>
#include <vector>

#include "collective_checks.hpp"
#include "collectives/vcollectives.hpp"
#include "comm.hpp"
#include "compute_share.hpp"
#include "error.hpp"
#include "runtime.hpp"
#include "xal_common/reduce.hpp"

using namespace xal::core;

namespace {

// size entries of `a`, or an error naming it when it is NULL.
xal_status_t array_check(const size_t* a, const char* what) {
  return a ? XAL_SUCCESS : null_argument(what);
}

// The elements a layout reaches: max over i of displs[i] + counts[i]
// (saturating), or the sum of counts when displs is null.
size_t extent(CommObj* c, const size_t* counts, const size_t* displs) {
  size_t end = 0;
  for (uint32_t i = 0; i < c->size; ++i) {
    const size_t start = displs ? displs[i] : end;
    const size_t e = counts[i] > SIZE_MAX - start ? SIZE_MAX : start + counts[i];
    end = displs ? std::max(end, e) : e;
  }
  return end;
}

VcollRank rank_of(CommObj* c, xal_dtype_t dtype) { return VcollRank{c->rank, c->size, dtype}; }

xal_status_t run(CommObj* c, StreamObj* s, const std::vector<P2pOp>& ops, const char* name,
                 size_t bytes, size_t count, xal_dtype_t dtype, int32_t op = -1) {
  return queued(c, bytes, s, submit_shared(s, [&] { return c->impl->p2p(ops, s); }), name, count,
                dtype, op);
}

}  // namespace

extern "C" {

XAL_API xal_status_t xal_allgatherv(xal_comm_t comm, xal_devptr_t send, size_t send_count,
                                    xal_devptr_t recv, const size_t* recv_counts,
                                    const size_t* displs, xal_dtype_t dtype,
                                    xal_stream_t stream) {
  return entry("xal_allgatherv", [&] {
    CommObj* c;
    StreamObj* s;
    if (xal_status_t r = check_call(comm, stream, dtype, nullptr, &c, &s); r) return r;
    if (xal_status_t r = array_check(recv_counts, "recv_counts"); r) return r;
    if (xal_status_t r = array_check(displs, "displs"); r) return r;
    if (recv_counts[c->rank] != send_count)
      return fail(c->device, XAL_ERROR_INVALID_ARGUMENT,
                  cat("recv_counts[", c->rank, "] is ", recv_counts[c->rank],
                      " but this rank sends send_count = ", send_count, " elements"));
    if (xal_status_t r = check_buffer(c, send, send_count, dtype, "send"); r) return r;
    if (xal_status_t r = check_buffer(c, recv, extent(c, recv_counts, displs), dtype, "recv"); r)
      return r;
    const auto ops = allgatherv_ops(rank_of(c, dtype), send, send_count, recv,
                                    {recv_counts, c->size}, {displs, c->size});
    return run(c, s, ops, "allgatherv", send_count * xal::common::dtype_size(dtype), send_count,
               dtype);
  });
}

XAL_API xal_status_t xal_reduce_scatterv(xal_comm_t comm, xal_devptr_t send, xal_devptr_t recv,
                                         const size_t* recv_counts, xal_dtype_t dtype,
                                         xal_op_t op, xal_stream_t stream) {
  return entry("xal_reduce_scatterv", [&] {
    CommObj* c;
    StreamObj* s;
    if (xal_status_t r = check_call(comm, stream, dtype, &op, &c, &s); r) return r;
    std::string why;
    if (xal_status_t r = xal::common::check_dtype_op(dtype, op, &why); r)
      return fail(c->device, r, cat("reduce_scatterv: ", why));
    if (xal_status_t r = array_check(recv_counts, "recv_counts"); r) return r;
    const size_t total = extent(c, recv_counts, nullptr);
    if (xal_status_t r = check_buffer(c, send, total, dtype, "send"); r) return r;
    const size_t mine = recv_counts[c->rank];
    if (xal_status_t r = check_buffer(c, recv, mine, dtype, "recv"); r) return r;
    const auto ops = reduce_scatterv_ops(rank_of(c, dtype), send, recv, {recv_counts, c->size}, op);
    return run(c, s, ops, "reduce_scatterv", total * xal::common::dtype_size(dtype), mine, dtype,
               static_cast<int32_t>(op));
  });
}

XAL_API xal_status_t xal_alltoallv(xal_comm_t comm, xal_devptr_t send, const size_t* send_counts,
                                   const size_t* send_displs, xal_devptr_t recv,
                                   const size_t* recv_counts, const size_t* recv_displs,
                                   xal_dtype_t dtype, xal_stream_t stream) {
  return entry("xal_alltoallv", [&] {
    CommObj* c;
    StreamObj* s;
    if (xal_status_t r = check_call(comm, stream, dtype, nullptr, &c, &s); r) return r;
    for (const auto& [a, what] : {std::pair{send_counts, "send_counts"},
                                  std::pair{send_displs, "send_displs"},
                                  std::pair{recv_counts, "recv_counts"},
                                  std::pair{recv_displs, "recv_displs"}})
      if (xal_status_t r = array_check(a, what); r) return r;
    const size_t sent = extent(c, send_counts, nullptr);
    if (xal_status_t r = check_buffer(c, send, extent(c, send_counts, send_displs), dtype, "send"); r)
      return r;
    if (xal_status_t r = check_buffer(c, recv, extent(c, recv_counts, recv_displs), dtype, "recv"); r)
      return r;
    const auto ops = alltoallv_ops(rank_of(c, dtype), send, {send_counts, c->size},
                                   {send_displs, c->size}, recv, {recv_counts, c->size},
                                   {recv_displs, c->size});
    return run(c, s, ops, "alltoallv", sent * xal::common::dtype_size(dtype), sent, dtype);
  });
}

XAL_API xal_status_t xal_gather(xal_comm_t comm, xal_devptr_t send, xal_devptr_t recv,
                                size_t send_count, xal_dtype_t dtype, uint32_t root,
                                xal_stream_t stream) {
  return entry("xal_gather", [&] {
    CommObj* c;
    StreamObj* s;
    if (xal_status_t r = check_call(comm, stream, dtype, nullptr, &c, &s); r) return r;
    if (xal_status_t r = root_check(c, root); r) return r;
    if (xal_status_t r = check_buffer(c, send, send_count, dtype, "send"); r) return r;
    if (c->rank == root)
      if (xal_status_t r = check_buffer(c, recv, scaled(send_count, c->size), dtype, "recv"); r)
        return r;
    const auto ops = gather_ops(rank_of(c, dtype), send, recv, send_count, root);
    return run(c, s, ops, "gather", send_count * xal::common::dtype_size(dtype), send_count,
               dtype);
  });
}

XAL_API xal_status_t xal_scatter(xal_comm_t comm, xal_devptr_t send, xal_devptr_t recv,
                                 size_t recv_count, xal_dtype_t dtype, uint32_t root,
                                 xal_stream_t stream) {
  return entry("xal_scatter", [&] {
    CommObj* c;
    StreamObj* s;
    if (xal_status_t r = check_call(comm, stream, dtype, nullptr, &c, &s); r) return r;
    if (xal_status_t r = root_check(c, root); r) return r;
    if (c->rank == root)
      if (xal_status_t r = check_buffer(c, send, scaled(recv_count, c->size), dtype, "send"); r)
        return r;
    if (xal_status_t r = check_buffer(c, recv, recv_count, dtype, "recv"); r) return r;
    const auto ops = scatter_ops(rank_of(c, dtype), send, recv, recv_count, root);
    return run(c, s, ops, "scatter", recv_count * xal::common::dtype_size(dtype), recv_count,
               dtype);
  });
}

}  // extern "C"
