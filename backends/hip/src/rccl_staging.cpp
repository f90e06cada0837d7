// rccl_staging.cpp -- the memory an in-place all-to-all copies its send
// buffer to before RCCL's sends and receives (see rccl_comm.h).
#include "errors.h"
#include "rccl_comm.h"

namespace xal::hip {
namespace {

void* ptr(xal_devptr_t address) { return reinterpret_cast<void*>(address); }

}  // namespace

void free_staging(xal_bcomm_s* comm) {
  const HipApi& api = comm->device->backend->api();
  if (comm->staging_generation == comm->device->generation) {
    // Best effort: the communicator goes whatever these return.
    if (comm->staging_free != nullptr) {
      (void)api.hipEventSynchronize(comm->staging_free);
      (void)api.hipEventDestroy(comm->staging_free);
    }
    for (void* p : comm->outgrown) (void)api.hipFree(p);
    for (const xal_bcomm_s::Staging& b : comm->staging) {
      if (b.ptr != nullptr) (void)api.hipFree(b.ptr);
    }
  }
  comm->outgrown.clear();
  comm->staging.clear();
  comm->staging_used = 0;
  comm->staging_free = nullptr;
}

xal_status_t stage(xal_bcomm_s* comm, hipStream_t stream, xal_devptr_t send, size_t bytes,
                   xal_devptr_t* out_copy) {
  xal_bdevice_s* device = comm->device;
  const HipApi& api = device->backend->api();
  if (comm->staging_generation != device->generation) free_staging(comm);
  if (comm->staging.size() <= comm->staging_used) comm->staging.resize(comm->staging_used + 1);
  xal_bcomm_s::Staging& buffer = comm->staging[comm->staging_used];
  if (buffer.bytes < bytes) {
    if (buffer.ptr != nullptr) comm->outgrown.push_back(buffer.ptr);
    buffer = {};
    if (xal_status_t s = check(device, api.hipMalloc(&buffer.ptr, bytes), "hipMalloc");
        s != XAL_SUCCESS) {
      buffer = {};
      return s;
    }
    buffer.bytes = bytes;
    comm->staging_generation = device->generation;
  }
  if (comm->staging_free == nullptr) {
    if (xal_status_t s = check(device,
                               api.hipEventCreateWithFlags(&comm->staging_free,
                                                           hipEventDisableTiming),
                               "hipEventCreateWithFlags");
        s != XAL_SUCCESS) {
      return s;
    }
  } else if (xal_status_t s = check(device, api.hipStreamWaitEvent(stream, comm->staging_free, 0),
                                    "hipStreamWaitEvent");
             s != XAL_SUCCESS) {
    return s;
  }
  if (xal_status_t s = check(device,
                             api.hipMemcpyDtoDAsync(buffer.ptr, ptr(send), bytes, stream),
                             "hipMemcpyDtoDAsync");
      s != XAL_SUCCESS) {
    return s;
  }
  ++comm->staging_used;
  *out_copy = reinterpret_cast<xal_devptr_t>(buffer.ptr);
  return XAL_SUCCESS;
}

xal_status_t staging_done(xal_bcomm_s* comm, hipStream_t stream) {
  comm->staging_used = 0;
  if (comm->staging_free == nullptr) return XAL_SUCCESS;  // staging failed
  return check(comm->device,
               comm->device->backend->api().hipEventRecord(comm->staging_free, stream),
               "hipEventRecord");
}

}  // namespace xal::hip
