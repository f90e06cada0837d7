#include "vcollectives.hpp"

#include "xal_common/reduce.hpp"

namespace xal::core {

namespace {

using OpKind = P2pOp::Kind;

// Peers in the order a rank visits them: itself, then the next ranks
// around the ring, so that the ranks' first messages go to different
// peers.
uint32_t nth_peer(const VcollRank& r, uint32_t i) { return (r.rank + i) % r.size; }
// Receives in the opposite direction: the i-th receive is from the rank
// whose i-th send comes here.
uint32_t nth_source(const VcollRank& r, uint32_t i) { return (r.rank + r.size - i) % r.size; }

xal_devptr_t at(const VcollRank& r, xal_devptr_t p, size_t elements) {
  return p + elements * common::dtype_size(r.dtype);
}

P2pOp make(const VcollRank& r, OpKind kind, uint32_t peer, xal_devptr_t ptr, size_t count,
           xal_op_t op = XAL_OP_SUM) {
  return P2pOp{kind, peer, ptr, count, r.dtype, op};
}

}  // namespace

std::vector<P2pOp> allgatherv_ops(const VcollRank& r, xal_devptr_t send, size_t send_count,
                                  xal_devptr_t recv, std::span<const size_t> recv_counts,
                                  std::span<const size_t> displs) {
  std::vector<P2pOp> ops;
  ops.reserve(2 * size_t{r.size});
  for (uint32_t i = 0; i < r.size; ++i) ops.push_back(make(r, OpKind::kSend, nth_peer(r, i), send, send_count));
  for (uint32_t i = 0; i < r.size; ++i) {
    const uint32_t p = nth_source(r, i);
    ops.push_back(make(r, OpKind::kRecv, p, at(r, recv, displs[p]), recv_counts[p]));
  }
  return ops;
}

std::vector<P2pOp> reduce_scatterv_ops(const VcollRank& r, xal_devptr_t send, xal_devptr_t recv,
                                       std::span<const size_t> recv_counts, xal_op_t op) {
  std::vector<size_t> offset(r.size, 0);
  for (uint32_t p = 1; p < r.size; ++p) offset[p] = offset[p - 1] + recv_counts[p - 1];
  std::vector<P2pOp> ops;
  ops.reserve(2 * size_t{r.size});
  for (uint32_t i = 0; i < r.size; ++i) {
    const uint32_t p = nth_peer(r, i);
    ops.push_back(make(r, OpKind::kSend, p, at(r, send, offset[p]), recv_counts[p]));
  }
  // In rank order: every rank reduces its block in the same order.
  for (uint32_t p = 0; p < r.size; ++p)
    ops.push_back(make(r, OpKind::kRecvReduce, p, recv, recv_counts[r.rank], op));
  return ops;
}

std::vector<P2pOp> alltoallv_ops(const VcollRank& r, xal_devptr_t send,
                                 std::span<const size_t> send_counts,
                                 std::span<const size_t> send_displs, xal_devptr_t recv,
                                 std::span<const size_t> recv_counts,
                                 std::span<const size_t> recv_displs) {
  std::vector<P2pOp> ops;
  ops.reserve(2 * size_t{r.size});
  for (uint32_t i = 0; i < r.size; ++i) {
    const uint32_t p = nth_peer(r, i);
    ops.push_back(make(r, OpKind::kSend, p, at(r, send, send_displs[p]), send_counts[p]));
  }
  for (uint32_t i = 0; i < r.size; ++i) {
    const uint32_t p = nth_source(r, i);
    ops.push_back(make(r, OpKind::kRecv, p, at(r, recv, recv_displs[p]), recv_counts[p]));
  }
  return ops;
}

std::vector<P2pOp> gather_ops(const VcollRank& r, xal_devptr_t send, xal_devptr_t recv,
                              size_t count, uint32_t root) {
  std::vector<P2pOp> ops{make(r, OpKind::kSend, root, send, count)};
  if (r.rank == root)
    for (uint32_t p = 0; p < r.size; ++p)
      ops.push_back(make(r, OpKind::kRecv, p, at(r, recv, p * count), count));
  return ops;
}

std::vector<P2pOp> scatter_ops(const VcollRank& r, xal_devptr_t send, xal_devptr_t recv,
                               size_t count, uint32_t root) {
  std::vector<P2pOp> ops;
  if (r.rank == root)
    for (uint32_t p = 0; p < r.size; ++p)
      ops.push_back(make(r, OpKind::kSend, p, at(r, send, p * count), count));
  ops.push_back(make(r, OpKind::kRecv, root, recv, count));
  return ops;
}

}  // namespace xal::core
