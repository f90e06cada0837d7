// The v-collectives and gather/scatter as point-to-point batches (the way
// NCCL's users compose them): one rank's sends and receives, for
// CommImpl::p2p, so that every path that has point-to-point has them.
// Arguments were checked by the API layer. Pure functions; thread-safe.
#pragma once

#include <span>
#include <vector>

#include "p2p_ops.hpp"

namespace xal::core {

struct VcollRank {
  uint32_t rank = 0;
  uint32_t size = 0;
  xal_dtype_t dtype = XAL_DTYPE_U8;
};

// Every rank sends its send_count elements to every rank; rank i's land at
// recv + displs[i] (recv_counts[i] elements).
std::vector<P2pOp> allgatherv_ops(const VcollRank& r, xal_devptr_t send, size_t send_count,
                                  xal_devptr_t recv, std::span<const size_t> recv_counts,
                                  std::span<const size_t> displs);
// Block i of send (recv_counts[i] elements, blocks back to back) goes to
// rank i, which reduces what every rank sent it, in rank order, into recv.
std::vector<P2pOp> reduce_scatterv_ops(const VcollRank& r, xal_devptr_t send, xal_devptr_t recv,
                                       std::span<const size_t> recv_counts, xal_op_t op);
// MPI_Alltoallv.
std::vector<P2pOp> alltoallv_ops(const VcollRank& r, xal_devptr_t send,
                                 std::span<const size_t> send_counts,
                                 std::span<const size_t> send_displs, xal_devptr_t recv,
                                 std::span<const size_t> recv_counts,
                                 std::span<const size_t> recv_displs);
// Every rank's count elements to root, at recv + i * count.
std::vector<P2pOp> gather_ops(const VcollRank& r, xal_devptr_t send, xal_devptr_t recv,
                              size_t count, uint32_t root);
// Root's block i (count elements) to rank i.
std::vector<P2pOp> scatter_ops(const VcollRank& r, xal_devptr_t send, xal_devptr_t recv,
                               size_t count, uint32_t root);

}  // namespace xal::core
