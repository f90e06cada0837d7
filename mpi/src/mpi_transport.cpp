#include "mpi_transport.hpp"

#include <cstdio>
#include <cstring>

#include "pieces.hpp"
#include "xal_common/reduce.hpp"

namespace xal::mpi {

namespace {

constexpr int kTag = 7;  // alltoallv's messages on xal's own communicator
// Allreduces from this size on run pairwise (latency matters below it).
constexpr size_t kPairwiseBytes = size_t{256} << 10;

const char* at(const void* p, size_t bytes) { return static_cast<const char*>(p) + bytes; }
char* at(void* p, size_t bytes) { return static_cast<char*>(p) + bytes; }
int as_int(size_t n) { return static_cast<int>(n); }  // n is within the piece limit

}  // namespace

MpiTransport::MpiTransport(MPI_Comm comm, int rank, std::vector<uint32_t> ranks, bool serialize,
                           size_t piece_limit)
    : comm_(comm), rank_(rank), ranks_(std::move(ranks)), serialize_(serialize),
      limit_(piece_limit) {}

MpiTransport::~MpiTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  MpiLock lock(serialize_);
  MPI_Comm_free(&comm_);  // with a request left pending, MPI frees it later
}

xal_comm_transport_t MpiTransport::table() {
  xal_comm_transport_t t{};
  t.struct_size = sizeof t;
  t.user = this;
  t.process_rank = static_cast<uint32_t>(rank_);
  t.process_count = static_cast<uint32_t>(ranks_.size());
  t.ranks_per_process = ranks_.data();
  t.allreduce = allreduce;
  t.broadcast = broadcast;
  t.allgatherv = allgatherv;
  t.alltoallv = alltoallv;
  t.abort = abort;
  t.release = release;
  t.reduce = reduce;
  t.reduce_scatter = reduce_scatter;
  t.send = send;
  t.recv = recv;
  t.split = split;
  return t;
}

std::vector<int> MpiTransport::to_int(const size_t* in) const {
  std::vector<int> out(ranks_.size());
  for (size_t p = 0; p < out.size(); ++p) out[p] = as_int(in[p]);
  return out;
}

xal_status_t MpiTransport::allreduce(void* user, const void* send, void* recv, size_t count,
                                     xal_dtype_t dtype, xal_op_t op, uint32_t timeout_ms,
                                     char* message, size_t message_size) {
  MpiTransport& t = self(user);
  const size_t es = common::dtype_size(dtype);
  const size_t np = t.ranks_.size();
  if (np > 1 && count * es >= kPairwiseBytes) {
    // Large: a pairwise reduce_scatter of P near-equal blocks, reduced on
    // several cores, then an allgather (mpi_reduce.cpp).
    std::vector<size_t> counts(np, count / np);
    for (size_t p = 0; p < count % np; ++p) ++counts[p];
    size_t mine = 0;
    for (size_t p = 0; p < static_cast<size_t>(t.rank_); ++p) mine += counts[p];
    return t.pairwise("allreduce", send, at(recv, mine * es), counts, dtype, op, recv, timeout_ms,
                      message, message_size);
  }
  return t.run("allreduce", piece_count(count, t.limit_), timeout_ms, message, message_size,
               [&](size_t i, Requests& r) {
                 const Piece p = piece_at(i, count, t.limit_);
                 return MPI_Iallreduce(send == recv ? MPI_IN_PLACE : at(send, p.offset * es),
                                       at(recv, p.offset * es), as_int(p.count), mpi_type(dtype),
                                       mpi_op(dtype, op), t.comm_, &r.emplace_back());
               });
}

xal_status_t MpiTransport::reduce(void* user, const void* send, void* recv, size_t count,
                                  xal_dtype_t dtype, xal_op_t op, uint32_t root,
                                  uint32_t timeout_ms, char* message, size_t message_size) {
  MpiTransport& t = self(user);
  std::vector<ReduceStep> steps;
  t.plan_reduce(steps, send, recv, count, static_cast<int>(root));
  return t.run_reduce("reduce", steps, dtype, op, timeout_ms, message, message_size);
}

xal_status_t MpiTransport::reduce_scatter(void* user, const void* send, void* recv,
                                          const size_t* recv_counts, xal_dtype_t dtype,
                                          xal_op_t op, uint32_t timeout_ms, char* message,
                                          size_t message_size) {
  MpiTransport& t = self(user);
  const std::span<const size_t> counts(recv_counts, t.ranks_.size());
  return t.pairwise("reduce_scatter", send, recv, counts, dtype, op, nullptr, timeout_ms, message,
                    message_size);
}

xal_status_t MpiTransport::broadcast(void* user, void* buf, size_t bytes, uint32_t root,
                                     uint32_t timeout_ms, char* message, size_t message_size) {
  MpiTransport& t = self(user);
  return t.run("broadcast", piece_count(bytes, t.limit_), timeout_ms, message, message_size,
               [&](size_t i, Requests& r) {
                 const Piece p = piece_at(i, bytes, t.limit_);
                 return MPI_Ibcast(at(buf, p.offset), as_int(p.count), MPI_BYTE,
                                   static_cast<int>(root), t.comm_, &r.emplace_back());
               });
}

xal_status_t MpiTransport::allgatherv(void* user, void* recv, const size_t* bytes,
                                      const size_t* displs, uint32_t timeout_ms, char* message,
                                      size_t message_size) {
  MpiTransport& t = self(user);
  const size_t np = t.ranks_.size();
  if (layout_fits({bytes, np}, {displs, np}, t.limit_)) {
    auto ints = std::make_unique<IntArrays>();
    ints->a = t.to_int(bytes);
    ints->b = t.to_int(displs);
    const int* c = ints->a.data();
    const int* d = ints->b.data();
    return t.run("allgather", 1, timeout_ms, message, message_size,
                 [&](size_t, Requests& r) {
                   return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, c, d,
                                          MPI_BYTE, t.comm_, &r.emplace_back());
                 }, std::move(ints));
  }
  // Too large for int counts: each process broadcasts its block, in pieces.
  const std::vector<BlockPiece> pieces = block_pieces({bytes, np}, {displs, np}, t.limit_);
  return t.run("allgather", pieces.size(), timeout_ms, message, message_size,
               [&](size_t i, Requests& r) {
                 const BlockPiece& p = pieces[i];
                 return MPI_Ibcast(at(recv, p.offset), as_int(p.count), MPI_BYTE,
                                   static_cast<int>(p.process), t.comm_, &r.emplace_back());
               });
}

// Point to point, as Open MPI's own MPI_Ialltoallv does, so that a block
// over the piece limit travels as several messages (each process decides
// alone: its counts differ from the others').
xal_status_t MpiTransport::alltoallv(void* user, const void* send, const size_t* send_bytes,
                                     const size_t* send_displs, void* recv,
                                     const size_t* recv_bytes, const size_t* recv_displs,
                                     uint32_t timeout_ms, char* message, size_t message_size) {
  MpiTransport& t = self(user);
  const size_t np = t.ranks_.size();
  const auto me = static_cast<uint32_t>(t.rank_);
  const std::vector<BlockPiece> in = block_pieces({recv_bytes, np}, {recv_displs, np}, t.limit_);
  const std::vector<BlockPiece> out = block_pieces({send_bytes, np}, {send_displs, np}, t.limit_);
  return t.run("alltoall", 1, timeout_ms, message, message_size, [&](size_t, Requests& r) {
    int rc = MPI_SUCCESS;
    for (const BlockPiece& p : in)
      if (p.process != me && rc == MPI_SUCCESS)
        rc = MPI_Irecv(at(recv, p.offset), as_int(p.count), MPI_BYTE, static_cast<int>(p.process),
                       kTag, t.comm_, &r.emplace_back());
    for (const BlockPiece& p : out)
      if (p.process != me && rc == MPI_SUCCESS)
        rc = MPI_Isend(at(send, p.offset), as_int(p.count), MPI_BYTE, static_cast<int>(p.process),
                       kTag, t.comm_, &r.emplace_back());
    if (rc == MPI_SUCCESS && recv_bytes[me])
      std::memmove(at(recv, recv_displs[me]), at(send, send_displs[me]), recv_bytes[me]);
    return rc;
  });
}

void MpiTransport::abort(void* user) { self(user).aborted_ = true; }

void MpiTransport::release(void* user) {
  std::unique_ptr<MpiTransport> owned(static_cast<MpiTransport*>(user));
}

}  // namespace xal::mpi
