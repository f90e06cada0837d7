// rccl_comm.h -- the communicator behind the RCCL entries (comm.cpp) and
// the staged copy of an in-place all-to-all's send buffer
// (rccl_staging.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "backend.h"
#include "rccl.h"

struct xal_bcomm_s {
  xal_bdevice_s* device = nullptr;
  xal::hip::ncclComm_t handle = nullptr;
  uint32_t rank = 0;
  uint32_t size = 0;
  xal::hip::Rccl* rccl = nullptr;
  std::atomic<bool> aborted{false};
  // The staged copy of an in-place all-to-all's send buffer (RCCL's sends
  // and receives of one group run at once): reused after `staging_free`,
  // grown as needed; outgrown buffers are freed with the communicator, as
  // a free would wait for the device, where a part may wait for a peer's.
  void* staging = nullptr;
  size_t staging_bytes = 0;
  uint64_t staging_generation = 0;
  std::vector<void*> outgrown;
  hipEvent_t staging_free = nullptr;
};

namespace xal::hip {

// Copies `bytes` of `send` to the staging memory on `stream`, after its
// last use; *out_copy is the copy. The device is entered.
xal_status_t stage(xal_bcomm_s* comm, hipStream_t stream, xal_devptr_t send, size_t bytes,
                   xal_devptr_t* out_copy);

// Frees the staging memory (at destroy), after its last use; memory of a
// generation a reset ended is only forgotten. The device is entered.
void free_staging(xal_bcomm_s* comm);

}  // namespace xal::hip
