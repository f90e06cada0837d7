// ShmTransport's zero-copy allreduce: when every process's buffer is a
// shared block (a tensor of the shared-tensor allocator, shared_tensors.cpp),
// the processes map each other's buffers (/proc/<pid>/fd, cached) and
// reduce in place: each reduces its share of the elements straight from
// every buffer into its own, then copies the others' shares from theirs.
// Per process that is its share read n times and the rest copied once,
// against a copy into the segment, the reduction and a copy out of it on
// the ordinary path. Rounds of a slot pipelined as there; barriers: offers
// made, mappings made, one per round and one at the end (nobody returns,
// and changes its buffer, while another still reads it).
#include <algorithm>
#include <cstring>
#include <vector>

#include "shm_layout.hpp"
#include "shm_transport.hpp"
#include "xal_common/reduce.hpp"
#include "xal_common/stream_copy.hpp"

namespace xal::torch_backend {

using namespace shm;

xal_status_t ShmTransport::zero_copy_allreduce(const void* send, void* recv, size_t count,
                                               xal_dtype_t dtype, xal_op_t op,
                                               int64_t deadline, std::string* why,
                                               bool* done) {
  *done = false;
  const size_t es = common::dtype_size(dtype), bytes = count * es;
  ProcSlot* procs = header_->procs();
  ProcSlot& me = procs[rank_];
  const auto block = send == recv ? find_shared_block(recv, bytes) : std::nullopt;
  me.zc_offered = block ? 1 : 0;
  if (block) {
    me.zc_fd = block->fd;
    me.zc_id = block->id;
    me.zc_block_bytes = block->bytes;
    me.zc_offset = reinterpret_cast<uintptr_t>(recv) - block->base;
  }
  if (xal_status_t s = barrier("allreduce", deadline, why); s) return s;
  std::vector<char*> buf(size_, nullptr);
  bool mapped = true;
  for (uint32_t q = 0; q < size_ && mapped; ++q)
    mapped = procs[q].zc_offered == 1 && procs[q].pidns == me.pidns;
  for (uint32_t q = 0; q < size_ && mapped; ++q) {
    if (q == rank_) {
      buf[q] = static_cast<char*>(recv);
      continue;
    }
    char* base = peers_.map(procs[q].pid, procs[q].zc_fd, procs[q].zc_id,
                            procs[q].zc_block_bytes);
    mapped = base != nullptr;
    buf[q] = mapped ? base + procs[q].zc_offset : nullptr;
  }
  me.zc_mapped = mapped ? 1 : 0;
  if (xal_status_t s = barrier("allreduce", deadline, why); s) return s;
  for (uint32_t q = 0; q < size_; ++q)
    if (procs[q].zc_mapped != 1) return XAL_SUCCESS;  // the ordinary path, everyone
  // Rounds of a slot's worth of elements, pipelined as on the ordinary
  // path (the data of a round stays in cache): after barrier k a process
  // copies the others' shares of round k-1 from their buffers and reduces
  // its share of round k; R rounds pass R+1 barriers.
  const size_t per_round = std::max<size_t>(1, slot_bytes_ / es);
  const size_t rounds = (count + per_round - 1) / per_round;
  auto share = [&](size_t k, uint32_t p, size_t* start, size_t* n) {
    const size_t off = k * per_round, len = std::min(per_round, count - off);
    const size_t base = len / size_, rem = len % size_;
    *start = off + p * base + std::min<size_t>(p, rem);
    *n = base + (p < rem ? 1 : 0);
  };
  std::vector<const void*> srcs(size_);
  auto reduce_round = [&](size_t k) {
    size_t start = 0, n = 0;
    share(k, rank_, &start, &n);
    if (n == 0) return;
    for (uint32_t q = 0; q < size_; ++q) srcs[q] = buf[q] + start * es;
    void* dst[] = {buf[rank_] + start * es};
    common::reduce(dtype, op, dst, srcs, n, 1);
  };
  // The others' results come with streaming stores (stream_copy.hpp) when
  // the call is large: nothing here reads them again before the call
  // returns. From 32 MiB: on this project's 2-core machine the bench's
  // shared calls took 5 to 20% less time that way at 64 and 256 MiB, but
  // 20 to 30% more at 4 and 16 MiB, where memcpy's results stay in the
  // caches for the next call (docs/PERFORMANCE.md). The ordinary path's
  // copies out of the segment, in place as DDP's are, gained nothing that
  // way and stay memcpy.
  auto copy_round = [&](size_t k) {
    for (uint32_t q = 0; q < size_; ++q) {
      if (q == rank_) continue;
      size_t start = 0, n = 0;
      share(k, q, &start, &n);
      common::stream_copy(buf[rank_] + start * es, buf[q] + start * es, n * es, count * es,
                          kStreamResultsMinBytes);
    }
  };
  reduce_round(0);
  for (size_t k = 1; k <= rounds; ++k) {
    if (xal_status_t s = barrier("allreduce", deadline, why); s) return s;
    copy_round(k - 1);
    if (k < rounds) reduce_round(k);
  }
  // Nobody returns (and changes its buffer) while another still reads it.
  if (xal_status_t s = barrier("allreduce", deadline, why); s) return s;
  *done = true;
  zero_copy_calls_.fetch_add(1);
  return XAL_SUCCESS;
}

}  // namespace xal::torch_backend
