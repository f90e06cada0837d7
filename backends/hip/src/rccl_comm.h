// rccl_comm.h -- the communicator behind the RCCL entries (comm.cpp) and
// the staged copy of an in-place all-to-all's send buffer
// (rccl_staging.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "backend.h"
#include "rccl_loader.h"
#include "xalsupport/message_pairs.h"

struct xal_bcomm_s {
  xal_bdevice_s* device = nullptr;
  xal::hip::ncclComm_t handle = nullptr;
  uint32_t rank = 0;
  uint32_t size = 0;
  xal::hip::Rccl* rccl = nullptr;
  // The ranks' sends and receives, paired as xal pairs them (RCCL does
  // not check a pair's count and dtype): shared by the ranks.
  std::shared_ptr<xal::support::MessagePairs> pairs;
  std::atomic<bool> aborted{false};
  // The staged copies of in-place all-to-alls' send buffers (RCCL's sends
  // and receives of one group run at once, at the group's end): one buffer
  // per in-place all-to-all of a group, reused by the next group after
  // `staging_free` (recorded after the group), grown as needed; outgrown
  // buffers are freed with the communicator, as a free would wait for the
  // device, where a part may wait for a peer's.
  struct Staging {
    void* ptr = nullptr;
    size_t bytes = 0;
  };
  std::vector<Staging> staging;  // by use within the group being queued
  size_t staging_used = 0;
  uint64_t staging_generation = 0;
  std::vector<void*> outgrown;
  hipEvent_t staging_free = nullptr;
};

namespace xal::hip {

// Copies `bytes` of `send` into the next staging buffer of the group being
// queued on `stream`, after the last group's use; *out_copy is the copy.
// The device is entered.
xal_status_t stage(xal_bcomm_s* comm, hipStream_t stream, xal_devptr_t send, size_t bytes,
                   xal_devptr_t* out_copy);

// After the group (or lone call) that used the staging memory is queued on
// `stream`: it is free once the stream gets there.
xal_status_t staging_done(xal_bcomm_s* comm, hipStream_t stream);

// Frees the staging memory (at destroy), after its last use; memory of a
// generation a reset ended is only forgotten. The device is entered.
void free_staging(xal_bcomm_s* comm);

}  // namespace xal::hip
