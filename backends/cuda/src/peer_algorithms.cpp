// peer_algorithms.cpp -- the collectives of a peer clique (peer_clique.h),
// from peer copies and xal's embedded reductions (kernels.h).
//
// Each step is queued on the communicator's own stream of the device that
// receives, so the devices' steps run at the same time; sync_all() ends a
// phase where a later one reads what an earlier one wrote elsewhere.
//
//   allreduce       reduce-scatter then all-gather: rank r reduces slice r
//                   of every rank's buffer, then every rank copies each
//                   slice from its owner. Each device moves (n-1)/n of the
//                   buffer in and out, and reduces 1/n of it.
//   reduce          the same reduce-scatter (slices off the root reduced
//                   into scratch), then the root pulls each slice.
//   reduce_scatter  rank r pulls segment r of every rank and reduces.
//   broadcast       scatter then all-gather: rank r pulls slice r from the
//                   root, then every rank pulls each slice from its
//                   holder, so the root sends the buffer about once, not
//                   n-1 times.
//   allgather       every rank pulls each block from its owner.
//   alltoall        every send buffer to scratch first (a rank's recv may be
//                   its send), then every rank pulls its blocks.
//
// In place (send == recv; for allgather send = recv + rank * count, for
// reduce_scatter recv = send + rank * count) works for every kind: no step
// writes a part of a buffer that a later or concurrent step reads.
#include <algorithm>

#include "entries.h"
#include "kernels.h"
#include "peer_clique.h"
#include "xal_common/reduce.hpp"

namespace xal::cuda {

namespace {

using common::CollDesc;
using common::CollKind;

// Slice r of a sliced collective (allreduce, reduce, broadcast) of `count`
// elements over n ranks: elements [lo, lo + len), aligned to 256 bytes;
// the last slices may be short or empty.
struct Slice {
  size_t lo = 0;
  size_t len = 0;
};

size_t slice_elements(size_t count, uint32_t n, size_t es) {
  const size_t align = std::max<size_t>(1, 256 / es);
  const size_t per = (count + n - 1) / n;
  return (per + align - 1) / align * align;
}

Slice slice_of(uint32_t r, size_t count, uint32_t n, size_t es) {
  const size_t per = slice_elements(count, n, es);
  const size_t lo = std::min(count, r * per);
  return {lo, std::min(per, count - lo)};
}

}  // namespace

size_t Clique::scratch_bytes(uint32_t rank, const CollDesc& d) const {
  const size_t es = common::dtype_size(d.dtype);
  const size_t bytes = d.count * es;
  switch (d.kind) {
    case CollKind::kAllreduce:
      return size() > 1 ? slice_elements(d.count, size(), es) * es : 0;
    case CollKind::kReduce:  // off the root: the slice's sum after the copy's place
      if (size() == 1) return 0;
      return slice_elements(d.count, size(), es) * es * (rank == d.root ? 1 : 2);
    case CollKind::kReduceScatter:
      return bytes;
    case CollKind::kAlltoall:
      return bytes * size();
    case CollKind::kBroadcast:
    case CollKind::kAllgather:
      return 0;
  }
  return 0;
}

// Rank's scratch memory of at least `bytes`, reserved when the call was
// queued (reserve()).
xal_status_t Clique::scratch(uint32_t rank, size_t bytes, xal_devptr_t* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Scratch& s = scratch_[rank];
  if (s.bytes < bytes) return XAL_ERROR_INTERNAL;  // reserve() was skipped
  *out = s.ptr;
  return XAL_SUCCESS;
}

// dst (on rank `to`) = src (on rank `from`), on `to`'s stream.
xal_status_t Clique::copy(uint32_t to, xal_devptr_t dst, uint32_t from, xal_devptr_t src,
                          size_t bytes) {
  if (bytes == 0 || (to == from && dst == src)) return XAL_SUCCESS;
  // Peer access was enabled by prepare(): not here, in a host function.
  return memcpy_peer_as_is(streams_[to], devices_[to], dst, devices_[from], src, bytes);
}

// acc (on rank `at`, d.count elements) op= every other rank's `src(r)`,
// through scratch; AVG divides by the rank count at the end.
template <typename Src>
xal_status_t Clique::reduce_into(uint32_t at, xal_devptr_t acc, const CollDesc& d, Src src) {
  if (d.count == 0) return XAL_SUCCESS;
  const BuiltinKernels& kernels = kernels_[at];  // got by prepare(): no load here
  const size_t bytes = d.count * common::dtype_size(d.dtype);
  xal_devptr_t tmp = 0;
  if (size() > 1) {
    if (xal_status_t s = scratch(at, bytes, &tmp); s != XAL_SUCCESS) return s;
  }
  const xal_op_t op = d.op == XAL_OP_AVG ? XAL_OP_SUM : d.op;
  for (uint32_t r = 0; r < size(); ++r) {
    if (r == at) continue;
    if (xal_status_t s = copy(at, tmp, r, src(r), bytes); s != XAL_SUCCESS) return s;
    if (xal_status_t s = builtin_reduce(kernels, streams_[at], acc, tmp, d.count, d.dtype, op);
        s != XAL_SUCCESS)
      return s;
  }
  if (d.op == XAL_OP_AVG) {
    return builtin_scale(kernels, streams_[at], acc, d.count, d.dtype,
                         static_cast<double>(size()));
  }
  return XAL_SUCCESS;
}

xal_status_t Clique::sync_all() {
  xal_status_t first = XAL_SUCCESS;
  for (xal_bstream_t* s : streams_) {
    const xal_status_t st = stream_synchronize(s);
    if (first == XAL_SUCCESS) first = st;
  }
  return first;
}

// Rank r reduces slice r of every rank's send buffer into acc[r] (on rank
// r), all ranks at once; then waits for every rank.
xal_status_t Clique::reduce_slices(const CollDesc& d, const std::vector<Part>& p,
                                   const std::vector<xal_devptr_t>& acc) {
  const uint32_t n = size();
  const size_t es = common::dtype_size(d.dtype);
  for (uint32_t r = 0; r < n; ++r) {
    const Slice sl = slice_of(r, d.count, n, es);
    if (sl.len == 0) continue;
    CollDesc part = d;
    part.count = sl.len;
    const size_t off = sl.lo * es;
    if (xal_status_t s = copy(r, acc[r], r, p[r].send + off, sl.len * es); s) return s;
    auto src = [&](uint32_t q) { return p[q].send + off; };
    if (xal_status_t s = reduce_into(r, acc[r], part, src); s) return s;
  }
  return sync_all();
}

// Every rank but `except` pulls slice q of the recv buffers from rank q,
// for every other q (the all-gather of the sliced algorithms).
xal_status_t Clique::gather_slices(const CollDesc& d, const std::vector<Part>& p,
                                   uint32_t except) {
  const uint32_t n = size();
  const size_t es = common::dtype_size(d.dtype);
  for (uint32_t r = 0; r < n; ++r) {
    if (r == except) continue;
    for (uint32_t q = 0; q < n; ++q) {
      if (q == r) continue;
      const Slice sl = slice_of(q, d.count, n, es);
      const size_t off = sl.lo * es;
      if (xal_status_t s = copy(r, p[r].recv + off, q, p[q].recv + off, sl.len * es); s)
        return s;
    }
  }
  return XAL_SUCCESS;
}

xal_status_t Clique::run_allreduce(const CollDesc& d, const std::vector<Part>& p) {
  const uint32_t n = size();
  const size_t es = common::dtype_size(d.dtype);
  // Slice r lands in its place in rank r's recv.
  std::vector<xal_devptr_t> acc(n);
  for (uint32_t r = 0; r < n; ++r) acc[r] = p[r].recv + slice_of(r, d.count, n, es).lo * es;
  if (xal_status_t s = reduce_slices(d, p, acc); s != XAL_SUCCESS) return s;
  return gather_slices(d, p, n);  // every rank pulls each slice from its owner
}

xal_status_t Clique::run_reduce(const CollDesc& d, const std::vector<Part>& p) {
  const uint32_t n = size();
  const uint32_t root = d.root;
  const size_t es = common::dtype_size(d.dtype);
  const size_t slice_bytes = slice_elements(d.count, n, es) * es;
  // The root's slice lands in its recv; the others' in their scratch,
  // after the part reduce_into() uses.
  std::vector<xal_devptr_t> acc(n);
  for (uint32_t r = 0; r < n; ++r) {
    if (r == root || n == 1) {
      acc[r] = p[r].recv + slice_of(r, d.count, n, es).lo * es;
    } else if (xal_status_t s = scratch(r, 2 * slice_bytes, &acc[r]); s != XAL_SUCCESS) {
      return s;
    } else {
      acc[r] += slice_bytes;
    }
  }
  if (xal_status_t s = reduce_slices(d, p, acc); s != XAL_SUCCESS) return s;
  for (uint32_t r = 0; r < n; ++r) {
    if (r == root) continue;
    const Slice sl = slice_of(r, d.count, n, es);
    if (xal_status_t s = copy(root, p[root].recv + sl.lo * es, r, acc[r], sl.len * es); s)
      return s;
  }
  return XAL_SUCCESS;
}

xal_status_t Clique::run_broadcast(const CollDesc& d, const std::vector<Part>& p) {
  const uint32_t n = size();
  const uint32_t root = d.root;
  const size_t es = common::dtype_size(d.dtype);
  // The root's whole buffer to its recv (nothing in place); slice r to rank r.
  if (xal_status_t s = copy(root, p[root].recv, root, p[root].send, d.count * es); s) return s;
  for (uint32_t r = 0; r < n; ++r) {
    if (r == root) continue;
    const Slice sl = slice_of(r, d.count, n, es);
    const size_t off = sl.lo * es;
    if (xal_status_t s = copy(r, p[r].recv + off, root, p[root].send + off, sl.len * es); s)
      return s;
  }
  if (xal_status_t s = sync_all(); s != XAL_SUCCESS) return s;
  // Every other rank pulls the slices it lacks from their holders (the
  // root's own slice from the root).
  return gather_slices(d, p, root);
}

xal_status_t Clique::run_alltoall(const CollDesc& d, const std::vector<Part>& p) {
  const uint32_t n = size();
  const size_t bytes = d.count * common::dtype_size(d.dtype);
  std::vector<xal_devptr_t> staged(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    if (xal_status_t s = scratch(i, n * bytes, &staged[i]); s != XAL_SUCCESS) return s;
    if (xal_status_t s = copy(i, staged[i], i, p[i].send, n * bytes); s != XAL_SUCCESS) return s;
  }
  if (xal_status_t s = sync_all(); s != XAL_SUCCESS) return s;
  for (uint32_t r = 0; r < n; ++r) {
    for (uint32_t i = 0; i < n; ++i) {
      if (xal_status_t s = copy(r, p[r].recv + i * bytes, i, staged[i] + r * bytes, bytes); s)
        return s;
    }
  }
  return XAL_SUCCESS;
}

xal_status_t Clique::run(const CollDesc& d, const std::vector<Part>& p) {
  const uint32_t n = size();
  const size_t bytes = d.count * common::dtype_size(d.dtype);
  xal_status_t s = XAL_SUCCESS;
  switch (d.kind) {
    case CollKind::kAllreduce:
      s = run_allreduce(d, p);
      break;
    case CollKind::kReduce:
      s = run_reduce(d, p);
      break;
    case CollKind::kBroadcast:
      s = run_broadcast(d, p);
      break;
    case CollKind::kAllgather:
      for (uint32_t r = 0; r < n && s == XAL_SUCCESS; ++r) {
        for (uint32_t i = 0; i < n && s == XAL_SUCCESS; ++i) {
          s = copy(r, p[r].recv + i * bytes, i, p[i].send, bytes);
        }
      }
      break;
    case CollKind::kReduceScatter:
      for (uint32_t r = 0; r < n && s == XAL_SUCCESS; ++r) {
        const size_t seg = r * bytes;
        s = copy(r, p[r].recv, r, p[r].send + seg, bytes);
        if (s == XAL_SUCCESS) {
          s = reduce_into(r, p[r].recv, d, [&](uint32_t i) { return p[i].send + seg; });
        }
      }
      break;
    case CollKind::kAlltoall:
      s = run_alltoall(d, p);
      break;
  }
  const xal_status_t synced = sync_all();
  return s != XAL_SUCCESS ? s : synced;
}

}  // namespace xal::cuda
