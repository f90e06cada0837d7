// nccl_comm.h -- the communicator behind the NCCL entries (comm.cpp), the
// NCCL status mapping (nccl_status.cpp) and the staging memory of an
// in-place alltoall (nccl_staging.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "nccl_clique.h"
#include "nccl_loader.h"
#include "xalsupport/message_pairs.h"

struct xal_bcomm_s {
  xal_bdevice_s* device = nullptr;
  // Every rank's NCCL communicator, shared by the ranks (nccl_clique.h):
  // a call uses this rank's through it, an abort aborts them all.
  std::shared_ptr<xal::cuda::NcclClique> clique;
  int rank = 0;
  int size = 0;
  // The ranks' sends and receives, paired as xal pairs them (NCCL does
  // not check a pair's count and dtype): shared by the ranks.
  std::shared_ptr<xal::support::MessagePairs> pairs;
  // Where an in-place alltoall copies its send buffer first (the sends and
  // receives of one NCCL group run at once, so a receive could overwrite a
  // block not yet sent): one buffer per in-place alltoall of a group (the
  // sends run at the group's end), `staging_free` recorded after the group,
  // and the next group waits for it on its own stream. Grown as needed; an
  // outgrown buffer is kept until destroy, as freeing it would wait for the
  // device, where another rank's part may be waiting for this one's.
  struct Staging {
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
  };
  std::vector<Staging> staging;  // by use within the group being queued
  size_t staging_used = 0;
  std::vector<CUdeviceptr> outgrown;
  uint64_t staging_generation = 0;  // the device's, when allocated
  CUevent staging_free = nullptr;
};

namespace xal::cuda {

// xal's status for an NCCL result.
xal_status_t map_nccl(ncclResult_t r);

// Reports a failed NCCL call (with ncclGetLastError's detail and `hint`);
// returns the status, or XAL_SUCCESS / XAL_NOT_READY unreported.
xal_status_t nccl_result(xal_backend_s* backend, ncclResult_t r, const char* call,
                         ncclComm_t comm, const std::string& hint = {});

// NCCL's type and op for xal's; false for one NCCL does not have.
bool map_dtype(xal_dtype_t dtype, ncclDataType_t* out);
bool map_op(xal_op_t op, ncclRedOp_t* out);

// Copies `bytes` of `send` into the next staging buffer of the group being
// queued on `stream`, after the last group's use; *out_copy is the copy.
// The comm's device is current.
xal_status_t stage(xal_bcomm_s* comm, CUstream stream, xal_devptr_t send, size_t bytes,
                   xal_devptr_t* out_copy);
// Marks the staging memory free once `stream` gets past this point (after
// the group that used it); the next group starts again at its first buffer.
xal_status_t staging_done(xal_bcomm_s* comm, CUstream stream);
// Releases the staging memory (at destroy), waiting for its last use; the
// memory of a context a reset took is only forgotten. The comm's device is
// current.
void free_staging(xal_bcomm_s* comm);

}  // namespace xal::cuda
