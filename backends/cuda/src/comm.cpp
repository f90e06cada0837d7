// comm.cpp -- the native collective entries through NCCL (nccl_loader.h):
// each checks what xal defines (the stream's device, dtype and op, the
// root, an aborted communicator) and calls NCCL on the caller's stream.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "entries.h"
#include "nccl_comm.h"
#include "xal_common/reduce.hpp"

namespace xal::cuda {
namespace {

void* dev(xal_devptr_t ptr) { return reinterpret_cast<void*>(ptr); }

// This thread's NCCL group depth, and the communicators (with their
// streams) whose staging memory its open group uses: NCCL runs the group's
// calls at its end, so the memory is free only after that.
thread_local int t_group_depth = 0;
thread_local std::vector<std::pair<xal_bcomm_s*, CUstream>> t_staged;
// The uses of the cliques whose communicators this thread's open group
// passed to NCCL (nccl_clique.h): NCCL keeps them until ncclGroupEnd, so
// an abort waits for the group's end.
thread_local std::vector<std::shared_ptr<NcclClique>> t_group_uses;

// Ends a use of `clique`; logs an abort it ran that NCCL refused.
void release_use(xal_backend_s* backend, NcclClique& clique) {
  if (const ncclResult_t r = clique.release(); r != ncclSuccess) {
    backend->log(XAL_LOG_WARNING, "cuda: ncclCommAbort failed with " + std::to_string(r) +
                                      " (" + backend->nccl->ncclGetErrorString(r) + ")");
  }
}

// A use of a rank's NCCL communicator for one entry: released when the
// entry returns, or, for a call NCCL keeps (`kept`: a collective) inside an
// open group, at the group's end.
class Use {
 public:
  Use(xal_backend_s* backend, xal_bcomm_s* comm, bool kept)
      : backend_(backend), clique_(comm->clique), handle_(clique_->acquire(comm->rank)),
        kept_(kept) {}
  ~Use() {
    if (handle_ == nullptr) return;
    if (kept_ && t_group_depth > 0) {
      try {
        t_group_uses.push_back(clique_);
        return;
      } catch (...) {  // cannot keep it: NCCL's group then races an abort
      }
    }
    release_use(backend_, *clique_);
  }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;
  // Null when the communicator was aborted.
  ncclComm_t handle() const { return handle_; }

 private:
  xal_backend_s* backend_;
  std::shared_ptr<NcclClique> clique_;
  ncclComm_t handle_;
  bool kept_;
};

// After an in-place alltoall's calls are queued: its staging memory is free
// once the stream gets there, or after the open group.
xal_status_t staging_queued(xal_bcomm_s* comm, CUstream stream) {
  if (t_group_depth == 0) return staging_done(comm, stream);
  for (const auto& [c, s] : t_staged) {
    if (c == comm) return XAL_SUCCESS;
  }
  t_staged.emplace_back(comm, stream);
  return XAL_SUCCESS;
}

// What a collective passes to NCCL besides its buffers.
struct Call {
  const Nccl& nccl;
  ncclComm_t comm;
  ncclDataType_t type;
  ncclRedOp_t op;
  CUstream stream;
  // Set by a call that failed before NCCL (and recorded the error itself).
  xal_status_t failed = XAL_SUCCESS;
};

// What a collective asks of NCCL beyond its buffers.
struct Shape {
  const char* name;  // the NCCL function, for messages
  xal_dtype_t dtype;
  xal_op_t op;
  bool with_op;
  uint32_t root;
  bool with_root;
};

// Checks what every collective needs, makes the device current and runs
// `issue` (the NCCL call) with the NCCL arguments; reports its result.
template <typename Issue>
xal_status_t collective(xal_bcomm_s* comm, xal_bstream_s* stream, const Shape& shape, Issue issue) {
  if (comm == nullptr || stream == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  xal_backend_s* backend = comm->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    // The message is made only on an error: this runs on every call.
    auto refuse = [&](xal_status_t status, const std::string& why) {
      return backend->error(status, std::string("cuda: ") + shape.name + ": " + why);
    };
    if (comm->clique->aborted()) {
      return refuse(XAL_ERROR_ABORTED, "the communicator was aborted");
    }
    if (stream->device != comm->device) {
      return refuse(XAL_ERROR_INVALID_ARGUMENT,
                    "the stream is not on rank " + std::to_string(comm->rank) + "'s device");
    }
    Call call{*backend->nccl, nullptr, {}, ncclSum, stream->stream};
    if (!map_dtype(shape.dtype, &call.type)) {
      return refuse(XAL_ERROR_INVALID_ARGUMENT, "unknown dtype");
    }
    if (shape.with_op) {
      // xal's rules first (avg on integers is NOT_SUPPORTED); NCCL's differ.
      std::string why;
      if (xal_status_t s = common::check_dtype_op(shape.dtype, shape.op, &why); s) {
        return refuse(s, why);
      }
      if (!map_op(shape.op, &call.op)) {
        return refuse(XAL_ERROR_INVALID_ARGUMENT, "unknown op");
      }
    }
    if (shape.with_root && shape.root >= static_cast<uint32_t>(comm->size)) {
      return refuse(XAL_ERROR_INVALID_ARGUMENT,
                    "root " + std::to_string(shape.root) + " is out of range");
    }
    if (xal_status_t s = comm->device->check_health(); s != XAL_SUCCESS) return s;
    if (const CUresult r = comm->device->make_current(); r != CUDA_SUCCESS) {
      return backend->fail(r, "cuCtxSetCurrent", comm->device);
    }
    // Held until NCCL is done with the communicator: an abort meanwhile
    // waits for it (nccl_clique.h).
    const Use use(backend, comm, /*kept=*/true);
    call.comm = use.handle();
    if (call.comm == nullptr) return refuse(XAL_ERROR_ABORTED, "the communicator was aborted");
    const ncclResult_t r = issue(call);
    if (call.failed != XAL_SUCCESS) return call.failed;
    return nccl_result(backend, r, shape.name, call.comm);
  });
}

constexpr bool kOp = true;
constexpr bool kRoot = true;

}  // namespace

xal_status_t comm_create(xal_bdevice_t* const* devices, uint32_t n,
                         const xal_bcomm_options_t* options, xal_bcomm_t** out_comms) {
  if (devices == nullptr || out_comms == nullptr || n == 0) return XAL_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < n; ++i) {
    if (devices[i] == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  }
  xal_backend_s* backend = devices[0]->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    (void)options;  // timeouts and aborts are the core's, through comm_abort
    if (backend->nccl == nullptr) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: NCCL could not be loaded: " + backend->note);
    }
    // NCCL takes the CUDA ordinals (the runtime's device numbers), which
    // are the driver's: the plugin's index is the ordinal of cuDeviceGet.
    std::vector<int> ordinals(n);
    for (uint32_t i = 0; i < n; ++i) ordinals[i] = static_cast<int>(devices[i]->index);
    std::vector<ncclComm_t> comms(n, nullptr);
    const ncclResult_t r =
        backend->nccl->ncclCommInitAll(comms.data(), static_cast<int>(n), ordinals.data());
    if (r != ncclSuccess) {
      // NCCL carries its own CUDA runtime, which may need a newer driver
      // than the one installed: say how to use xal's own collectives.
      return nccl_result(backend, r, "ncclCommInitAll", nullptr,
                         " (NCCL " + std::to_string(backend->nccl->version()) + ", driver CUDA " +
                             std::to_string(backend->driver_version) +
                             "; XAL_CUDA_NCCL=off runs collectives on xal's own path)");
    }
    // Out of host memory here: every rank's NCCL communicator is aborted.
    std::shared_ptr<NcclClique> clique;
    std::vector<std::unique_ptr<xal_bcomm_s>> made;
    try {
      clique = std::make_shared<NcclClique>(*backend->nccl, comms);
      auto pairs = std::make_shared<support::MessagePairs>();
      for (uint32_t i = 0; i < n; ++i) {
        auto comm = std::make_unique<xal_bcomm_s>();
        comm->device = devices[i];
        comm->clique = clique;
        comm->pairs = pairs;
        comm->rank = static_cast<int>(i);
        comm->size = static_cast<int>(n);
        made.push_back(std::move(comm));
      }
    } catch (...) {
      if (clique != nullptr) {
        clique->abort();
      } else {
        for (ncclComm_t c : comms) backend->nccl->ncclCommAbort(c);
      }
      throw;
    }
    for (uint32_t i = 0; i < n; ++i) out_comms[i] = made[i].release();
    return XAL_SUCCESS;
  });
}

xal_status_t comm_destroy(xal_bcomm_t* comm) {
  if (comm == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  xal_backend_s* backend = comm->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    std::unique_ptr<xal_bcomm_s> owned(comm);
    std::erase_if(t_staged, [comm](const auto& staged) { return staged.first == comm; });
    if (!comm->staging.empty() && comm->device->make_current() == CUDA_SUCCESS) {
      free_staging(comm);
    }
    // Null once the clique was aborted: ncclCommAbort frees (or will free)
    // the NCCL communicator.
    const ncclComm_t nccl_comm = comm->clique->take_for_destroy(comm->rank);
    if (nccl_comm == nullptr) return XAL_SUCCESS;
    return nccl_result(backend, backend->nccl->ncclCommDestroy(nccl_comm), "ncclCommDestroy",
                       nullptr);
  });
}

// Aborts every rank's NCCL communicator (NCCL's abort is per rank; xal's
// ends every rank's calls), each once, once no other thread uses it
// (nccl_clique.h). ncclCommAbort frees them: calls then give ABORTED, and
// destroy frees only xal's part.
xal_status_t comm_abort(xal_bcomm_t* comm) {
  if (comm == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  xal_backend_s* backend = comm->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    return nccl_result(backend, comm->clique->abort(), "ncclCommAbort", nullptr);
  });
}

xal_status_t comm_get_async_error(xal_bcomm_t* comm, xal_status_t* out_error) {
  if (comm == nullptr || out_error == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  xal_backend_s* backend = comm->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    const Use use(backend, comm, /*kept=*/false);
    if (use.handle() == nullptr) {
      *out_error = XAL_ERROR_ABORTED;
      return XAL_SUCCESS;
    }
    ncclResult_t async = ncclSuccess;
    const ncclResult_t r = backend->nccl->ncclCommGetAsyncError(use.handle(), &async);
    if (r != ncclSuccess) {
      return nccl_result(backend, r, "ncclCommGetAsyncError", use.handle());
    }
    *out_error = map_nccl(async);
    return XAL_SUCCESS;
  });
}

xal_status_t group_start(xal_backend_t* backend) {
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (backend->nccl == nullptr) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED, "cuda: NCCL is not loaded");
    }
    const ncclResult_t r = backend->nccl->ncclGroupStart();
    if (r == ncclSuccess) ++t_group_depth;
    return nccl_result(backend, r, "ncclGroupStart", nullptr);
  });
}

xal_status_t group_end(xal_backend_t* backend) {
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (backend->nccl == nullptr) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED, "cuda: NCCL is not loaded");
    }
    const ncclResult_t r = backend->nccl->ncclGroupEnd();
    if (t_group_depth > 0 && --t_group_depth == 0) {
      // NCCL is done with the group's communicators: an abort may free them.
      for (const auto& clique : std::exchange(t_group_uses, {})) release_use(backend, *clique);
      // The group's calls are queued: the staging memory they read is free
      // once each stream gets past them.
      xal_status_t marked = XAL_SUCCESS;
      for (const auto& [comm, stream] : std::exchange(t_staged, {})) {
        const CUresult cr = comm->device->make_current();
        const xal_status_t s = cr == CUDA_SUCCESS
                                   ? staging_done(comm, stream)
                                   : backend->fail(cr, "cuCtxSetCurrent", comm->device);
        if (marked == XAL_SUCCESS) marked = s;
      }
      if (r == ncclSuccess && marked != XAL_SUCCESS) return marked;
    }
    return nccl_result(backend, r, "ncclGroupEnd", nullptr);
  });
}

xal_status_t allreduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                       xal_dtype_t dtype, xal_op_t op, xal_bstream_t* stream) {
  return collective(comm, stream, {"ncclAllReduce", dtype, op, kOp, 0, !kRoot}, [&](Call& c) {
    return c.nccl.ncclAllReduce(dev(send), dev(recv), count, c.type, c.op, c.comm, c.stream);
  });
}

xal_status_t broadcast(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                       xal_dtype_t dtype, uint32_t root, xal_bstream_t* stream) {
  return collective(comm, stream, {"ncclBroadcast", dtype, XAL_OP_SUM, !kOp, root, kRoot},
                    [&](Call& c) {
                      return c.nccl.ncclBroadcast(dev(send), dev(recv), count, c.type,
                                                  static_cast<int>(root), c.comm, c.stream);
                    });
}

xal_status_t reduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                    xal_dtype_t dtype, xal_op_t op, uint32_t root, xal_bstream_t* stream) {
  return collective(comm, stream, {"ncclReduce", dtype, op, kOp, root, kRoot}, [&](Call& c) {
    return c.nccl.ncclReduce(dev(send), dev(recv), count, c.type, c.op, static_cast<int>(root),
                             c.comm, c.stream);
  });
}

xal_status_t allgather(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t send_count,
                       xal_dtype_t dtype, xal_bstream_t* stream) {
  return collective(
      comm, stream, {"ncclAllGather", dtype, XAL_OP_SUM, !kOp, 0, !kRoot}, [&](Call& c) {
        return c.nccl.ncclAllGather(dev(send), dev(recv), send_count, c.type, c.comm, c.stream);
      });
}

xal_status_t reduce_scatter(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t recv_count, xal_dtype_t dtype, xal_op_t op,
                            xal_bstream_t* stream) {
  return collective(comm, stream, {"ncclReduceScatter", dtype, op, kOp, 0, !kRoot}, [&](Call& c) {
    return c.nccl.ncclReduceScatter(dev(send), dev(recv), recv_count, c.type, c.op, c.comm,
                                    c.stream);
  });
}

// Block j of send goes to rank j, block j of recv comes from rank j: one
// NCCL group of sends and receives, from a staged copy when the buffers
// overlap.
xal_status_t alltoall(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                      xal_dtype_t dtype, xal_bstream_t* stream) {
  return collective(
      comm, stream, {"ncclSend/ncclRecv (alltoall)", dtype, XAL_OP_SUM, !kOp, 0, !kRoot},
      [&](Call& c) -> ncclResult_t {
        const size_t block = count * common::dtype_size(dtype);
        const size_t total = block * static_cast<size_t>(comm->size);
        const bool overlap = total > 0 && send < recv + total && recv < send + total;
        xal_devptr_t from = send;
        if (overlap) {
          c.failed = stage(comm, c.stream, send, total, &from);
          if (c.failed != XAL_SUCCESS) return ncclSuccess;
        }
        ncclResult_t r = c.nccl.ncclGroupStart();
        for (int peer = 0; r == ncclSuccess && peer < comm->size; ++peer) {
          r = c.nccl.ncclSend(dev(from + block * peer), count, c.type, peer, c.comm, c.stream);
          if (r == ncclSuccess) {
            r = c.nccl.ncclRecv(dev(recv + block * peer), count, c.type, peer, c.comm, c.stream);
          }
        }
        const ncclResult_t ended = c.nccl.ncclGroupEnd();
        if (r == ncclSuccess) r = ended;
        if (overlap) {
          const xal_status_t s = staging_queued(comm, c.stream);
          if (r == ncclSuccess) c.failed = s;
        }
        return r;
      });
}

namespace {

// One send or receive: NCCL's, on the caller's stream, with the checks of
// the collectives. The k-th send of a rank to `peer` pairs with the k-th
// receive of `peer` from it; NCCL leaves a pair that disagrees on count or
// dtype undefined, so the pair is checked here when its second half is
// queued (nccl_comm.h, pairs): both ranks' streams then fail their next
// synchronize with COLLECTIVE_MISMATCH. NCCL is still called as asked (its
// ncclSend or ncclRecv may already be queued on the peer).
xal_status_t point_to_point(xal_bcomm_s* comm, bool send, xal_devptr_t ptr, size_t count,
                            xal_dtype_t dtype, uint32_t peer, xal_bstream_s* stream) {
  if (comm == nullptr || stream == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  xal_backend_s* backend = comm->device->backend;
  const char* name = send ? "ncclSend" : "ncclRecv";
  // Inside collective()'s exception barrier, before NCCL is called.
  return collective(comm, stream, {name, dtype, XAL_OP_SUM, !kOp, 0, !kRoot}, [&](Call& c) {
    if (peer >= static_cast<uint32_t>(comm->size)) {
      c.failed = backend->error(XAL_ERROR_INVALID_ARGUMENT,
                                std::string("cuda: ") + name + ": peer " + std::to_string(peer) +
                                    " is out of range (" + std::to_string(comm->size) +
                                    " ranks)");
      return ncclSuccess;
    }
    const int to = static_cast<int>(peer);
    const ncclResult_t r = send ? c.nccl.ncclSend(dev(ptr), count, c.type, to, c.comm, c.stream)
                                : c.nccl.ncclRecv(dev(ptr), count, c.type, to, c.comm, c.stream);
    if (r != ncclSuccess) return r;
    const auto mismatch = comm->pairs->post(send, static_cast<uint32_t>(comm->rank), peer,
                                            {count, dtype, stream});
    if (mismatch) {
      const std::string why = "ncclSend/ncclRecv: " + mismatch->why;
      backend->stream_failures.note(mismatch->send_stream, XAL_ERROR_COLLECTIVE_MISMATCH, why);
      backend->stream_failures.note(mismatch->recv_stream, XAL_ERROR_COLLECTIVE_MISMATCH, why);
    }
    return r;
  });
}

}  // namespace

xal_status_t comm_send(xal_bcomm_t* comm, xal_devptr_t send, size_t count, xal_dtype_t dtype,
                       uint32_t peer, xal_bstream_t* stream) {
  return point_to_point(comm, true, send, count, dtype, peer, stream);
}

xal_status_t comm_recv(xal_bcomm_t* comm, xal_devptr_t recv, size_t count, xal_dtype_t dtype,
                       uint32_t peer, xal_bstream_t* stream) {
  return point_to_point(comm, false, recv, count, dtype, peer, stream);
}

}  // namespace xal::cuda
