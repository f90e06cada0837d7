// Point-to-point (xal_send, xal_recv) and communicator splits
// (xal_comm_split, xal_comm_dup): argument checks, then the communicator's
// path (CommImpl::p2p, CommImpl::split).
#include "collective_checks.hpp"
#include "comm.hpp"
#include "compute_share.hpp"
#include "error.hpp"
#include "runtime.hpp"
#include "xal_common/reduce.hpp"

using namespace xal::core;

namespace {

xal_status_t peer_check(CommObj* c, uint32_t peer) {
  if (peer < c->size) return XAL_SUCCESS;
  return fail(c->device, XAL_ERROR_INVALID_ARGUMENT,
              cat("peer ", peer, " is out of range (communicator of ", c->size, " ranks)"));
}

// `dtype` by reference: it is checked before its value is read as the enum
// (a caller's out-of-range value is an error, not undefined behaviour).
xal_status_t one_message(const char* name, P2pOp::Kind kind, xal_comm_t comm, xal_devptr_t ptr,
                         size_t count, const xal_dtype_t& dtype, uint32_t peer,
                         xal_stream_t stream) {
  CommObj* c;
  StreamObj* s;
  if (xal_status_t r = check_call(comm, stream, dtype, nullptr, &c, &s); r) return r;
  if (xal_status_t r = peer_check(c, peer); r) return r;
  const bool sending = kind == P2pOp::Kind::kSend;
  if (xal_status_t r = check_buffer(c, ptr, count, dtype, sending ? "send" : "recv"); r) return r;
  const size_t bytes = count * xal::common::dtype_size(dtype);
  return queued(c, bytes, s, submit_shared(s, [&] {
                  return sending ? c->impl->send(ptr, count, dtype, peer, s)
                                 : c->impl->recv(ptr, count, dtype, peer, s);
                }),
                name, count, dtype);
}

}  // namespace

extern "C" {

XAL_API xal_status_t xal_send(xal_comm_t comm, xal_devptr_t send, size_t count,
                              xal_dtype_t dtype, uint32_t peer, xal_stream_t stream) {
  return entry("xal_send", [&] {
    return one_message("send", P2pOp::Kind::kSend, comm, send, count, dtype, peer, stream);
  });
}

XAL_API xal_status_t xal_recv(xal_comm_t comm, xal_devptr_t recv, size_t count,
                              xal_dtype_t dtype, uint32_t peer, xal_stream_t stream) {
  return entry("xal_recv", [&] {
    return one_message("recv", P2pOp::Kind::kRecv, comm, recv, count, dtype, peer, stream);
  });
}

XAL_API xal_status_t xal_comm_split(xal_comm_t comm, int32_t color, int32_t key,
                                    const xal_comm_options_t* options, xal_comm_t* out_comm) {
  return entry("xal_comm_split", [&] {
    CommObj* c = as_comm(comm);
    if (!c) return bad_handle(comm, "comm");
    if (!out_comm) return null_argument("out_comm");
    if (options) XAL_CHECK_STRUCT(options, "options");
    SplitArgs a;
    a.rank = c->rank;
    a.size = c->size;
    a.color = color < 0 ? XAL_COMM_SPLIT_NOCOLOR : color;
    a.key = key;
    a.timeout_ms = options && options->timeout_ms ? options->timeout_ms : c->timeout_ms;
    *out_comm = nullptr;
    // Inside a group the ranks meet at xal_group_end (one chain per rank).
    note_group_call(comm, nullptr);
    CommImpl* impl = c->impl.get();
    if (defer_to_group_end(impl, [impl, a, out_comm] { return impl->split(a, out_comm); }))
      return XAL_SUCCESS;
    return impl->split(a, out_comm);
  });
}

XAL_API xal_status_t xal_comm_dup(xal_comm_t comm, xal_comm_t* out_comm) {
  return entry("xal_comm_dup", [&] {
    CommObj* c = as_comm(comm);
    if (!c) return bad_handle(comm, "comm");
    return xal_comm_split(comm, 0, static_cast<int32_t>(c->rank), nullptr, out_comm);
  });
}

}  // extern "C"
