// nccl_staging.cpp -- the memory an in-place alltoall copies its send
// buffer to before NCCL's sends and receives (see nccl_comm.h).
#include "nccl_comm.h"

namespace xal::cuda {

void free_staging(xal_bcomm_s* comm) {
  const DriverSymbols& d = comm->device->backend->driver;
  const bool alive = comm->staging_generation == comm->device->generation.load();
  if (comm->staging_free != nullptr && alive) {
    d.cuEventSynchronize(comm->staging_free);
    d.cuEventDestroy(comm->staging_free);
  }
  if (alive) {
    for (CUdeviceptr p : comm->outgrown) d.cuMemFree(p);
    for (const xal_bcomm_s::Staging& b : comm->staging) {
      if (b.ptr != 0) d.cuMemFree(b.ptr);
    }
  }
  comm->outgrown.clear();
  comm->staging.clear();
  comm->staging_used = 0;
  comm->staging_free = nullptr;
}

xal_status_t stage(xal_bcomm_s* comm, CUstream stream, xal_devptr_t send, size_t bytes,
                   xal_devptr_t* out_copy) {
  xal_backend_s* backend = comm->device->backend;
  const DriverSymbols& d = backend->driver;
  if (comm->staging_generation != comm->device->generation.load()) {
    free_staging(comm);  // a device reset took it
  }
  CUresult r = CUDA_SUCCESS;
  if (comm->staging.size() <= comm->staging_used) comm->staging.resize(comm->staging_used + 1);
  xal_bcomm_s::Staging& buffer = comm->staging[comm->staging_used];
  if (buffer.bytes < bytes) {
    if (buffer.ptr != 0) comm->outgrown.push_back(buffer.ptr);
    buffer = {};
    if ((r = d.cuMemAlloc(&buffer.ptr, bytes)) != CUDA_SUCCESS) {
      buffer = {};
      return backend->fail(r, "cuMemAlloc (alltoall in place)", comm->device);
    }
    buffer.bytes = bytes;
    comm->staging_generation = comm->device->generation.load();
  }
  if (comm->staging_free == nullptr) {
    if ((r = d.cuEventCreate(&comm->staging_free, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS) {
      comm->staging_free = nullptr;
      return backend->fail(r, "cuEventCreate", comm->device);
    }
  } else if ((r = d.cuStreamWaitEvent(stream, comm->staging_free, 0)) != CUDA_SUCCESS) {
    return backend->fail(r, "cuStreamWaitEvent", comm->device);
  }
  if ((r = d.cuMemcpyDtoDAsync(buffer.ptr, send, bytes, stream)) != CUDA_SUCCESS) {
    return backend->fail(r, "cuMemcpyDtoDAsync (alltoall in place)", comm->device);
  }
  ++comm->staging_used;
  *out_copy = buffer.ptr;
  return XAL_SUCCESS;
}

xal_status_t staging_done(xal_bcomm_s* comm, CUstream stream) {
  comm->staging_used = 0;
  if (comm->staging_free == nullptr) return XAL_SUCCESS;  // staging failed
  const CUresult r = comm->device->backend->driver.cuEventRecord(comm->staging_free, stream);
  return r == CUDA_SUCCESS ? XAL_SUCCESS
                           : comm->device->backend->fail(r, "cuEventRecord", comm->device);
}

}  // namespace xal::cuda
