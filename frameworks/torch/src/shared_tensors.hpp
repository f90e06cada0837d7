// The shared-tensor allocator: torch's CPU allocator replaced, process-wide,
// by one whose allocations of at least `min_bytes` are shared blocks
// (shared_blocks.hpp: a memfd each, which the other ranks of the host can
// map), smaller ones going to the allocator it replaced. An allreduce of
// such tensors on every rank of a host runs in place, without copies
// through the shared-memory segment (shm_zero_copy.cpp). Opt-in:
// xal_torch.use_shared_tensors() or XAL_TORCH_SHARED_TENSORS=1 at import;
// it applies to tensors allocated after it (DDP's buckets: make the model's
// DDP after it). Freed blocks are kept for reuse (shared_blocks.hpp).
#pragma once

#include <cstddef>

namespace xal::torch_backend {

// Installs the allocator (min_bytes > 0), or, with min_bytes == 0, puts the
// allocator it replaced back. Tensors already allocated keep their memory
// and their deleter. Thread-safe; affects every later CPU allocation.
void use_shared_tensors(size_t min_bytes);
// The threshold in force, 0 when the allocator is not installed.
size_t shared_tensors_min_bytes();
// True when [p, p + bytes) is memory of a shared block.
bool is_shared_memory(const void* p, size_t bytes);

}  // namespace xal::torch_backend
