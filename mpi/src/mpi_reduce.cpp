// Reductions over point-to-point messages, cut at the piece limit
// (pieces.hpp). Reduce: a binomial tree rooted at the root's process; each
// process receives its children's buffers one after another (the child
// with the smallest subtree first), reduces each into its partial result
// on several cores, and sends that to its parent; a leaf only sends.
// Reduce_scatter and large allreduces: the pairwise exchange below.
#include <algorithm>
#include <cstring>

#include "mpi_transport.hpp"
#include "pieces.hpp"
#include "xal_common/reduce.hpp"

namespace xal::mpi {

namespace {

constexpr int kReduceTag = 8;
constexpr int kScatterTag = 9;
constexpr int kGatherTag = 10;

void grow(std::unique_ptr<char[]>& buf, size_t& have, size_t bytes) {
  if (bytes <= have) return;
  buf.reset();
  buf = std::make_unique_for_overwrite<char[]>(bytes);
  have = bytes;
}

}  // namespace

void MpiTransport::plan_reduce(std::vector<ReduceStep>& steps, const void* send, void* recv,
                               size_t count, int root) {
  if (count == 0) return;
  const int np = static_cast<int>(ranks_.size());
  const int me = rank_;
  const int vr = (me - root + np) % np;  // rank relative to the root
  int parent = -1;
  std::vector<int> children;
  for (int mask = 1; mask < np; mask <<= 1) {
    if (vr & mask) {
      parent = (vr - mask + root) % np;
      break;
    }
    if (vr + mask < np) children.push_back((vr + mask + root) % np);
  }
  if (children.empty()) {  // a leaf (or the only process)
    if (parent >= 0) steps.push_back({ReduceStep::kSend, parent, send, nullptr, count, false});
    else if (send != recv) steps.push_back({ReduceStep::kCopy, 0, send, recv, count, false});
    return;
  }
  const bool partial = parent >= 0;  // an inner node keeps its partial result in partial_
  if (partial || send != recv)
    steps.push_back({ReduceStep::kCopy, 0, send, partial ? nullptr : recv, count, partial});
  for (int child : children)
    steps.push_back(
        {ReduceStep::kReceive, child, nullptr, partial ? nullptr : recv, count, partial});
  if (partial) steps.push_back({ReduceStep::kSend, parent, nullptr, nullptr, count, true});
}

xal_status_t MpiTransport::run_reduce(const char* what, const std::vector<ReduceStep>& steps,
                                      xal_dtype_t dtype, xal_op_t op, uint32_t timeout_ms,
                                      char* message, size_t message_size) {
  const size_t es = common::dtype_size(dtype);
  size_t in_bytes = 0, partial_bytes = 0;
  for (const ReduceStep& s : steps) {
    if (s.kind == ReduceStep::kReceive) in_bytes = std::max(in_bytes, s.count * es);
    if (s.partial) partial_bytes = std::max(partial_bytes, s.count * es);
  }
  {
    // Buffers that a request left pending may still use are never freed
    // while this transport lives: only a healthy transport grows them (a
    // broken one fails in run() before any step).
    std::lock_guard lock(broken_mu_);
    if (broken_ == XAL_SUCCESS) {
      grow(incoming_, incoming_bytes_, in_bytes);
      grow(partial_, partial_bytes_, partial_bytes);
    }
  }
  const MPI_Datatype type = mpi_type(dtype);
  auto start = [&](size_t i, Requests& r) {
    const ReduceStep& s = steps[i];
    int rc = MPI_SUCCESS;
    for (size_t k = 0, n = piece_count(s.count, limit_); k < n && rc == MPI_SUCCESS; ++k) {
      const Piece p = piece_at(k, s.count, limit_);
      if (s.kind == ReduceStep::kReceive)
        rc = MPI_Irecv(incoming_.get() + p.offset * es, static_cast<int>(p.count), type, s.peer,
                       kReduceTag, comm_, &r.emplace_back());
      else if (s.kind == ReduceStep::kSend)
        rc = MPI_Isend(
            static_cast<const char*>(s.partial ? partial_.get() : s.from) + p.offset * es,
            static_cast<int>(p.count), type, s.peer, kReduceTag, comm_, &r.emplace_back());
    }
    return rc;
  };
  auto after = [&](size_t i) {
    const ReduceStep& s = steps[i];
    void* acc = s.partial ? partial_.get() : s.acc;
    if (s.kind == ReduceStep::kCopy) {
      std::memcpy(acc, s.from, s.count * es);
    } else if (s.kind == ReduceStep::kReceive) {
      const void* srcs[] = {acc, incoming_.get()};
      parallel_reduce(dtype, op, acc, srcs, s.count);
    }
  };
  return run(what, steps.size(), timeout_ms, message, message_size, start, after);
}

// Reduce_scatter, pairwise: every process sends each other process that
// one's block and receives its own block from every other, all at once,
// then reduces its block and the P - 1 received ones on several cores.
// Each process sends (P - 1)/P of its buffer, the least a reduce_scatter
// can. With `gather` (an allreduce), a second step sends the reduced block
// to every other process and receives theirs at their place in `gather`.
xal_status_t MpiTransport::pairwise(const char* what, const void* send, void* recv,
                                    std::span<const size_t> counts, xal_dtype_t dtype,
                                    xal_op_t op, void* gather, uint32_t timeout_ms,
                                    char* message, size_t message_size) {
  const size_t es = common::dtype_size(dtype);
  const size_t np = counts.size(), me = static_cast<size_t>(rank_);
  std::vector<size_t> offset(np);
  for (size_t p = 1; p < np; ++p) offset[p] = offset[p - 1] + counts[p - 1];
  const size_t mine = counts[me] * es;
  {
    std::lock_guard lock(broken_mu_);  // as in run_reduce
    if (broken_ == XAL_SUCCESS) grow(incoming_, incoming_bytes_, (np - 1) * mine);
  }
  // Process q's block arrives in slot q (q < me) or q - 1.
  auto slot = [&](size_t q) { return incoming_.get() + (q < me ? q : q - 1) * mine; };
  const MPI_Datatype type = mpi_type(dtype);
  // Sends `count` elements at `from` to q and receives counts[q] from q at
  // `to`, in pieces.
  auto exchange = [&](Requests& r, size_t q, char* to, size_t to_count, const void* from,
                      size_t count, int tag) {
    int rc = MPI_SUCCESS;
    for (size_t k = 0, n = piece_count(to_count, limit_); k < n && rc == MPI_SUCCESS; ++k) {
      const Piece p = piece_at(k, to_count, limit_);
      rc = MPI_Irecv(to + p.offset * es, static_cast<int>(p.count), type, static_cast<int>(q), tag,
                     comm_, &r.emplace_back());
    }
    for (size_t k = 0, n = piece_count(count, limit_); k < n && rc == MPI_SUCCESS; ++k) {
      const Piece p = piece_at(k, count, limit_);
      rc = MPI_Isend(static_cast<const char*>(from) + p.offset * es, static_cast<int>(p.count),
                     type, static_cast<int>(q), tag, comm_, &r.emplace_back());
    }
    return rc;
  };
  auto start = [&](size_t step, Requests& r) {
    int rc = MPI_SUCCESS;
    for (size_t q = 0; q < np && rc == MPI_SUCCESS; ++q) {
      if (q == me) continue;
      if (step == 0)
        rc = exchange(r, q, slot(q), counts[me], static_cast<const char*>(send) + offset[q] * es,
                      counts[q], kScatterTag);
      else
        rc = exchange(r, q, static_cast<char*>(gather) + offset[q] * es, counts[q], recv,
                      counts[me], kGatherTag);
    }
    return rc;
  };
  auto after = [&](size_t step) {
    if (step != 0) return;
    std::vector<const void*> srcs = {static_cast<const char*>(send) + offset[me] * es};
    for (size_t q = 0; q < np; ++q)
      if (q != me) srcs.push_back(slot(q));
    parallel_reduce(dtype, op, recv, srcs, counts[me]);
  };
  return run(what, gather ? 2 : 1, timeout_ms, message, message_size, start, after);
}

}  // namespace xal::mpi
