// Native collectives through RCCL (dlopen'ed when present). Without RCCL
// every entry reports XAL_ERROR_NOT_SUPPORTED. Where RCCL and xal differ,
// xal's rules are kept (as the CUDA plugin's NCCL entries keep them): avg
// on integers is NOT_SUPPORTED, a root out of range is refused, an
// in-place all-to-all goes through a staged copy of the send buffer, and
// an aborted communicator (ncclCommAbort frees it) is not used again.
#include <utility>
#include <vector>

#include "entries.h"
#include "errors.h"
#include "rccl_comm.h"
#include "xal_common/reduce.hpp"
#include "xalsupport/nccl_abi.h"

namespace xal::hip {
namespace {
namespace nccl_abi = xal::support::nccl_abi;

// Owns the communicators handed to the core; freed by comm_destroy.
struct CommRegistry {
  std::mutex mutex;
  std::unordered_map<xal_bcomm_s*, std::unique_ptr<xal_bcomm_s>> comms;
};
CommRegistry& registry() {
  static CommRegistry instance;
  return instance;
}

xal_status_t rccl_check(Rccl* rccl, ncclResult_t result, const char* what) {
  const xal_status_t status = nccl_abi::status_of(result);
  if (status == XAL_SUCCESS) return XAL_SUCCESS;
  const char* text = rccl->ncclGetErrorString(result);
  return report(status, result, nccl_abi::result_name(result),
                std::string(what) + " failed: " + (text ? text : "?"));
}

xal_status_t not_supported() {
  return report(XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                "RCCL (librccl.so.1) is not loaded");
}

// RCCL's op for xal's (checked by prepare()).
int rccl_op(xal_op_t op) {
  int out = -1;
  nccl_abi::to_nccl(op, &out);
  return out;
}

// Checks the comm, stream and types shared by every collective; `op` and
// `root` where the collective has them (kNoOp, kNoRoot otherwise).
constexpr xal_op_t kNoOp = static_cast<xal_op_t>(-1);
constexpr uint32_t kNoRoot = UINT32_MAX;
xal_status_t prepare(xal_bcomm_s* comm, xal_bstream_s* stream, xal_dtype_t dtype,
                     int* out_dtype, xal_op_t op = kNoOp, uint32_t root = kNoRoot) {
  if (comm == nullptr || stream == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  if (comm->rccl == nullptr) return not_supported();
  if (comm->aborted) {
    return report(XAL_ERROR_ABORTED, 0, nullptr, "the communicator was aborted");
  }
  if (op != kNoOp) {
    std::string why;
    if (xal_status_t s = common::check_dtype_op(dtype, op, &why); s != XAL_SUCCESS) {
      return report(s, 0, nullptr, why);
    }
  }
  if (root != kNoRoot && root >= comm->size) {
    return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                  "root " + std::to_string(root) + " is out of range");
  }
  if (!nccl_abi::to_nccl(dtype, out_dtype)) {
    return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr, "unknown dtype");
  }
  if (stream->device != comm->device) {
    return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                  "the stream is not on the communicator's device");
  }
  return enter(stream->device, stream->generation, "the stream");
}

void* ptr(xal_devptr_t address) { return reinterpret_cast<void*>(address); }

// This thread's RCCL group depth, and the communicators (with their
// streams) whose staging memory its open group uses: RCCL runs the group's
// calls at its end, so the memory is free only after that.
thread_local int t_group_depth = 0;
thread_local std::vector<std::pair<xal_bcomm_s*, hipStream_t>> t_staged;

// After an in-place all-to-all's calls are queued: its staging memory is
// free once the stream gets there, or after the open group.
xal_status_t staging_queued(xal_bcomm_s* comm, hipStream_t stream) {
  if (t_group_depth == 0) return staging_done(comm, stream);
  for (const auto& [c, s] : t_staged) {
    if (c == comm) return XAL_SUCCESS;
  }
  t_staged.emplace_back(comm, stream);
  return XAL_SUCCESS;
}

}  // namespace

xal_status_t comm_create(xal_bdevice_t* const* devices, uint32_t n,
                         const xal_bcomm_options_t* /*options*/,
                         xal_bcomm_t** out_comms) {
  return guarded(Entry{}, "hip comm_create", [&]() -> xal_status_t {
    if (devices == nullptr || n == 0 || out_comms == nullptr) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "comm_create: no devices");
    }
    Rccl& rccl = devices[0]->backend->rccl;
    if (!rccl.available()) return not_supported();
    std::vector<int> ordinals(n);
    for (uint32_t i = 0; i < n; ++i) ordinals[i] = devices[i]->ordinal;
    std::vector<ncclComm_t> handles(n);
    if (xal_status_t s = rccl_check(&rccl,
                                    rccl.ncclCommInitAll(handles.data(),
                                                         static_cast<int>(n),
                                                         ordinals.data()),
                                    "ncclCommInitAll");
        s != XAL_SUCCESS) {
      return s;
    }
    auto pairs = std::make_shared<support::MessagePairs>();
    std::lock_guard lock(registry().mutex);
    for (uint32_t i = 0; i < n; ++i) {
      auto comm = std::make_unique<xal_bcomm_s>();
      comm->device = devices[i];
      comm->handle = handles[i];
      comm->rank = i;
      comm->size = n;
      comm->rccl = &rccl;
      comm->pairs = pairs;
      out_comms[i] = comm.get();
      registry().comms.emplace(comm.get(), std::move(comm));
    }
    return XAL_SUCCESS;
  });
}

// Releases the communicator whatever ncclCommDestroy says: the core drops
// its handle after comm_destroy in any case (it never retries one).
xal_status_t comm_destroy(xal_bcomm_t* comm) {
  return guarded(Entry{}, "hip comm_destroy", [&]() -> xal_status_t {
    std::unique_ptr<xal_bcomm_s> owned;
    {
      std::lock_guard lock(registry().mutex);
      auto found = registry().comms.find(comm);
      if (found == registry().comms.end()) {
        return report(XAL_ERROR_INVALID_HANDLE, 0, nullptr,
                      "not a live RCCL communicator");
      }
      owned = std::move(found->second);
      registry().comms.erase(found);
    }
    std::erase_if(t_staged,
                  [&owned](const auto& staged) { return staged.first == owned.get(); });
    if (!owned->staging.empty() && enter(owned->device) == XAL_SUCCESS) {
      free_staging(owned.get());
    }
    if (owned->aborted) return XAL_SUCCESS;  // ncclCommAbort freed RCCL's part
    return rccl_check(owned->rccl, owned->rccl->ncclCommDestroy(owned->handle),
                      "ncclCommDestroy");
  });
}

xal_status_t comm_abort(xal_bcomm_t* comm) {
  return guarded(Entry{}, "hip comm_abort", [&]() -> xal_status_t {
    if (comm == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
    if (comm->aborted.exchange(true)) return XAL_SUCCESS;
    return rccl_check(comm->rccl, comm->rccl->ncclCommAbort(comm->handle),
                      "ncclCommAbort");
  });
}

xal_status_t comm_get_async_error(xal_bcomm_t* comm, xal_status_t* out_error) {
  return guarded(Entry{}, "hip comm_get_async_error", [&]() -> xal_status_t {
    if (comm == nullptr || out_error == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
    if (comm->aborted) {
      *out_error = XAL_ERROR_ABORTED;
      return XAL_SUCCESS;
    }
    ncclResult_t async = 0;
    if (xal_status_t s = rccl_check(
            comm->rccl, comm->rccl->ncclCommGetAsyncError(comm->handle, &async),
            "ncclCommGetAsyncError");
        s != XAL_SUCCESS) {
      return s;
    }
    *out_error = async == 0 ? XAL_SUCCESS
                            : rccl_check(comm->rccl, async, "RCCL (async)");
    return XAL_SUCCESS;
  });
}

xal_status_t group_start(xal_backend_t* backend) {
  return guarded(Entry{}, "hip group_start", [&]() -> xal_status_t {
    if (!backend->rccl.available()) return not_supported();
    const xal_status_t s =
        rccl_check(&backend->rccl, backend->rccl.ncclGroupStart(), "ncclGroupStart");
    if (s == XAL_SUCCESS) ++t_group_depth;
    return s;
  });
}

xal_status_t group_end(xal_backend_t* backend) {
  return guarded(Entry{}, "hip group_end", [&]() -> xal_status_t {
    if (!backend->rccl.available()) return not_supported();
    xal_status_t s = rccl_check(&backend->rccl, backend->rccl.ncclGroupEnd(), "ncclGroupEnd");
    if (t_group_depth > 0 && --t_group_depth == 0) {
      // The group's calls are queued: the staging memory they read is free
      // once each stream gets past them.
      for (const auto& [comm, stream] : std::exchange(t_staged, {})) {
        xal_status_t marked = enter(comm->device);
        if (marked == XAL_SUCCESS) marked = staging_done(comm, stream);
        if (s == XAL_SUCCESS) s = marked;
      }
    }
    return s;
  });
}

xal_status_t allreduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                       size_t count, xal_dtype_t dtype, xal_op_t op,
                       xal_bstream_t* stream) {
  return guarded(Entry{}, "hip allreduce", [&]() -> xal_status_t {
    int type = 0;
    if (xal_status_t s = prepare(comm, stream, dtype, &type, op); s != XAL_SUCCESS) {
      return s;
    }
    return rccl_check(comm->rccl,
                      comm->rccl->ncclAllReduce(ptr(send), ptr(recv), count, type,
                                                rccl_op(op), comm->handle,
                                                stream->handle),
                      "ncclAllReduce");
  });
}

xal_status_t broadcast(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                       size_t count, xal_dtype_t dtype, uint32_t root,
                       xal_bstream_t* stream) {
  return guarded(Entry{}, "hip broadcast", [&]() -> xal_status_t {
    int type = 0;
    if (xal_status_t s = prepare(comm, stream, dtype, &type, kNoOp, root);
        s != XAL_SUCCESS) {
      return s;
    }
    return rccl_check(comm->rccl,
                      comm->rccl->ncclBroadcast(ptr(send), ptr(recv), count, type,
                                                static_cast<int>(root),
                                                comm->handle, stream->handle),
                      "ncclBroadcast");
  });
}

xal_status_t reduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                    size_t count, xal_dtype_t dtype, xal_op_t op, uint32_t root,
                    xal_bstream_t* stream) {
  return guarded(Entry{}, "hip reduce", [&]() -> xal_status_t {
    int type = 0;
    if (xal_status_t s = prepare(comm, stream, dtype, &type, op, root); s != XAL_SUCCESS) {
      return s;
    }
    return rccl_check(comm->rccl,
                      comm->rccl->ncclReduce(ptr(send), ptr(recv), count, type,
                                             rccl_op(op), static_cast<int>(root),
                                             comm->handle, stream->handle),
                      "ncclReduce");
  });
}

xal_status_t allgather(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                       size_t send_count, xal_dtype_t dtype,
                       xal_bstream_t* stream) {
  return guarded(Entry{}, "hip allgather", [&]() -> xal_status_t {
    int type = 0;
    if (xal_status_t s = prepare(comm, stream, dtype, &type); s != XAL_SUCCESS) {
      return s;
    }
    return rccl_check(comm->rccl,
                      comm->rccl->ncclAllGather(ptr(send), ptr(recv), send_count,
                                                type, comm->handle,
                                                stream->handle),
                      "ncclAllGather");
  });
}

xal_status_t reduce_scatter(xal_bcomm_t* comm, xal_devptr_t send,
                            xal_devptr_t recv, size_t recv_count,
                            xal_dtype_t dtype, xal_op_t op,
                            xal_bstream_t* stream) {
  return guarded(Entry{}, "hip reduce_scatter", [&]() -> xal_status_t {
    int type = 0;
    if (xal_status_t s = prepare(comm, stream, dtype, &type, op); s != XAL_SUCCESS) {
      return s;
    }
    return rccl_check(comm->rccl,
                      comm->rccl->ncclReduceScatter(ptr(send), ptr(recv),
                                                    recv_count, type, rccl_op(op),
                                                    comm->handle, stream->handle),
                      "ncclReduceScatter");
  });
}

xal_status_t alltoall(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                      size_t count, xal_dtype_t dtype, xal_bstream_t* stream) {
  return guarded(Entry{}, "hip alltoall", [&]() -> xal_status_t {
    int type = 0;
    if (xal_status_t s = prepare(comm, stream, dtype, &type); s != XAL_SUCCESS) {
      return s;
    }
    Rccl* rccl = comm->rccl;
    const size_t block = count * common::dtype_size(dtype);
    const size_t total = block * comm->size;
    const bool overlap = total > 0 && send < recv + total && recv < send + total;
    if (overlap) {
      if (xal_status_t s = stage(comm, stream->handle, send, total, &send); s != XAL_SUCCESS) {
        return s;
      }
    }
    if (xal_status_t s = rccl_check(rccl, rccl->ncclGroupStart(), "ncclGroupStart");
        s != XAL_SUCCESS) {
      return s;
    }
    xal_status_t first = XAL_SUCCESS;
    for (uint32_t peer = 0; peer < comm->size && first == XAL_SUCCESS; ++peer) {
      first = rccl_check(rccl,
                         rccl->ncclSend(ptr(send + peer * block), count, type,
                                        static_cast<int>(peer), comm->handle,
                                        stream->handle),
                         "ncclSend");
      if (first == XAL_SUCCESS) {
        first = rccl_check(rccl,
                           rccl->ncclRecv(ptr(recv + peer * block), count, type,
                                          static_cast<int>(peer), comm->handle,
                                          stream->handle),
                           "ncclRecv");
      }
    }
    xal_status_t end = rccl_check(rccl, rccl->ncclGroupEnd(), "ncclGroupEnd");
    if (overlap) {
      const xal_status_t s = staging_queued(comm, stream->handle);
      if (end == XAL_SUCCESS) end = s;
    }
    return first != XAL_SUCCESS ? first : end;
  });
}

namespace {

// One send or receive: RCCL's, on the caller's stream, with the checks of
// the collectives. The k-th send of a rank to `peer` pairs with the k-th
// receive of `peer` from it; RCCL leaves a pair that disagrees on count or
// dtype undefined, so the pair is checked here when its second half is
// queued (rccl_comm.h, pairs): both ranks' streams then fail their next
// synchronize with COLLECTIVE_MISMATCH. RCCL is still called as asked (its
// ncclSend or ncclRecv may already be queued on the peer).
xal_status_t point_to_point(xal_bcomm_s* comm, bool send, xal_devptr_t buffer, size_t count,
                            xal_dtype_t dtype, uint32_t peer, xal_bstream_s* stream) {
  const char* name = send ? "ncclSend" : "ncclRecv";
  int type = 0;
  if (xal_status_t s = prepare(comm, stream, dtype, &type); s != XAL_SUCCESS) return s;
  if (peer >= comm->size) {
    return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                  std::string(name) + ": peer " + std::to_string(peer) + " is out of range (" +
                      std::to_string(comm->size) + " ranks)");
  }
  Rccl* rccl = comm->rccl;
  const int to = static_cast<int>(peer);
  const ncclResult_t r =
      send ? rccl->ncclSend(ptr(buffer), count, type, to, comm->handle, stream->handle)
           : rccl->ncclRecv(ptr(buffer), count, type, to, comm->handle, stream->handle);
  if (xal_status_t s = rccl_check(rccl, r, name); s != XAL_SUCCESS) return s;
  const auto mismatch = comm->pairs->post(send, comm->rank, peer, {count, dtype, stream});
  if (mismatch) {
    const std::string why = "ncclSend/ncclRecv: " + mismatch->why;
    support::StreamFailures& failures = comm->device->backend->stream_failures;
    failures.note(mismatch->send_stream, XAL_ERROR_COLLECTIVE_MISMATCH, why);
    failures.note(mismatch->recv_stream, XAL_ERROR_COLLECTIVE_MISMATCH, why);
  }
  return XAL_SUCCESS;
}

}  // namespace

xal_status_t comm_send(xal_bcomm_t* comm, xal_devptr_t send, size_t count, xal_dtype_t dtype,
                       uint32_t peer, xal_bstream_t* stream) {
  return guarded(Entry{}, "hip comm_send", [&]() -> xal_status_t {
    return point_to_point(comm, true, send, count, dtype, peer, stream);
  });
}

xal_status_t comm_recv(xal_bcomm_t* comm, xal_devptr_t recv, size_t count, xal_dtype_t dtype,
                       uint32_t peer, xal_bstream_t* stream) {
  return guarded(Entry{}, "hip comm_recv", [&]() -> xal_status_t {
    return point_to_point(comm, false, recv, count, dtype, peer, stream);
  });
}

}  // namespace xal::hip
