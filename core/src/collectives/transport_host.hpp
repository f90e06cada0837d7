// Host-memory work of the leader's step across processes (transport_step):
// the local reduction and the copies to every local rank, split over cores
// with oneTBB as the mock's in-process collectives are, and the scratch
// memory the leader reuses from call to call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "xal/xal.h"

namespace xal::core {

// dsts[d][i] = op over r of srcs[r][i], i < count, as common::reduce (any
// dst may alias any src; avg divides by avg_divisor), in slices that run on
// several cores. Blocks until done. Thread-safe (no shared state).
void parallel_reduce(xal_dtype_t dtype, xal_op_t op, std::span<void* const> dsts,
                     std::span<const void* const> srcs, size_t count, uint32_t avg_divisor);

// Copies `bytes` of `src` to every dst (a dst equal to src is skipped), in
// slices that run on several cores. Blocks until done. Thread-safe.
void parallel_copy(std::span<void* const> dsts, const void* src, size_t bytes);

// Host memory the leader reuses: grown on demand (the old contents are not
// kept) and freed with the owner, so that a large collective does not map
// and fault in fresh pages at every call. Not thread-safe: one leader.
class Scratch {
 public:
  // At least `bytes` (uninitialised). Throws std::bad_alloc.
  void* get(size_t bytes);

 private:
  std::unique_ptr<char[]> buf_;
  size_t bytes_ = 0;
};

}  // namespace xal::core
