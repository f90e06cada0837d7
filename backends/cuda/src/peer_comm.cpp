// peer_comm.cpp -- native collectives without NCCL: the table entries of
// the variant used when NCCL is absent and XAL_CUDA_COLLECTIVES=peer, with
// host functions on xal's threads (host_funcs.h).
//
// Each rank's call queues a host function on the caller's stream; the
// ranks' calls meet in their clique (peer_clique.h), and the last to arrive
// runs the collective (peer_algorithms.cpp) on the communicator's own
// streams and waits for it, while every rank's stream waits for its host
// function. So the collective starts after the work queued before it on
// every rank's stream and ends before the work queued after it, and the
// caller never blocks. Thread-safe: ranks may call from one thread or many.
//
// Scratch memory is reserved when a call is queued, on the caller's thread
// (no allocation or free in a host function: it may wait for the very
// streams that wait for the host function), and kept until the
// communicator goes; the last rank's comm_destroy waits for the queued
// calls, so that the clique is freed on its thread, never in a host
// function. Modules, kernels and peer access are set up when the
// communicator is made (Clique::prepare()), never in a host function.
//
// A rank's host function blocks and calls the driver, which a callback of
// the driver (cuLaunchHostFunc) must not: the calls need host functions on
// xal's threads (host_funcs.h). A stream without them is refused, and a
// part that still reaches the driver's thread (its stream could not wait
// for xal's thread) breaks the communicator instead of running there.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "entries.h"
#include "host_funcs.h"
#include "peer_clique.h"
#include "xal_common/host_collective.hpp"

namespace xal::cuda {

namespace {

using common::CollDesc;
using common::CollKind;

// One rank's communicator (xal_bcomm_t of this table variant). The ranks
// share the clique; queued calls hold a plain pointer to it, kept valid by
// the last comm_destroy waiting for them.
struct PeerComm {
  std::shared_ptr<Clique> clique;
  uint32_t rank = 0;
};

PeerComm* as_comm(xal_bcomm_t* comm) { return reinterpret_cast<PeerComm*>(comm); }

// A queued call: what the host function needs.
struct Job {
  Clique* clique = nullptr;
  uint32_t rank = 0;
  uint64_t seq = 0;
  CollDesc desc;
  xal_devptr_t send = 0;
  xal_devptr_t recv = 0;
};

void run_job(void* user) {
  std::unique_ptr<Job> job(static_cast<Job*>(user));
  Clique* clique = job->clique;
  if (on_host_func_thread()) {
    clique->arrive(job->rank, job->seq, job->desc, job->send, job->recv);
  } else {
    // The driver's callback thread: no driver call, no wait. The other
    // ranks are woken, and the communicator is broken.
    clique->fail(XAL_ERROR_BACKEND,
                 std::string(common::coll_name(job->desc.kind)) + ": rank " +
                     std::to_string(job->rank) +
                     "'s part reached the driver's callback thread (its stream could not "
                     "wait for xal's thread: cuStreamWaitValue32 failed) and did not run");
  }
  job.reset();
  clique->call_ended();  // the last use: the clique may be freed from here on
}

xal_status_t enqueue(xal_bcomm_t* handle, xal_bstream_t* stream, const CollDesc& d,
                     xal_devptr_t send, xal_devptr_t recv) {
  if (handle == nullptr || stream == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  PeerComm* comm = as_comm(handle);
  Clique& clique = *comm->clique;
  xal_backend_s* backend = clique.backend();
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    const char* name = common::coll_name(d.kind);
    if (stream->device != clique.device(comm->rank)) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            std::string("cuda: ") + name + ": the stream is not on rank " +
                                std::to_string(comm->rank) + "'s device");
    }
    std::string why;
    if (xal_status_t s = common::check_coll_dtype_op(d, &why); s)
      return backend->error(s, std::string("cuda: ") + name + ": " + why);
    if (d.root >= clique.size()) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            std::string("cuda: ") + name + ": root " + std::to_string(d.root) +
                                " is out of range");
    }
    if (xal_status_t e = clique.error(); e != XAL_SUCCESS) {
      return backend->error(e, std::string("cuda: ") + name + ": " + clique.error_message());
    }
    // The rank's part must run on xal's thread of the stream (see the top).
    std::string missing;
    if (xal_status_t s = stream_has_host_func_runner(stream, &missing); s != XAL_SUCCESS) {
      if (s != XAL_ERROR_NOT_SUPPORTED) return s;
      return backend->error(s, std::string("cuda: ") + name +
                                   ": collectives without NCCL need host functions on xal's "
                                   "threads, and this stream cannot have them (" +
                                   missing + ")");
    }
    // The scratch memory this rank's device needs for the call.
    if (xal_status_t s = clique.reserve(comm->rank, clique.scratch_bytes(comm->rank, d)); s)
      return s;
    auto job = std::make_unique<Job>();
    job->clique = comm->clique.get();
    job->rank = comm->rank;
    job->seq = clique.queue_call(comm->rank);
    job->desc = d;
    job->send = send;
    job->recv = recv;
    if (xal_status_t s = stream_enqueue_host_func(stream, run_job, job.get()); s != XAL_SUCCESS) {
      // This rank's part of the call never comes, and its sequence number
      // is used: the other ranks would wait for it, and later calls pair
      // with the wrong ones. The communicator is broken, as NCCL's would be.
      clique.fail(s, std::string(name) + ": rank " + std::to_string(comm->rank) +
                         " could not queue its part");
      clique.call_ended();
      return s;
    }
    job.release();  // run_job owns it now
    return XAL_SUCCESS;
  });
}

}  // namespace

xal_status_t peer_comm_create(xal_bdevice_t* const* devices, uint32_t n,
                              const xal_bcomm_options_t* options, xal_bcomm_t** out_comms) {
  if (devices == nullptr || out_comms == nullptr || n == 0 || devices[0] == nullptr)
    return XAL_ERROR_INVALID_ARGUMENT;
  xal_backend_s* backend = devices[0]->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (!backend->host_func_threads) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: collectives without NCCL need host functions on xal's "
                            "threads (XAL_CUDA_HOST_FUNCS=thread)");
    }
    std::vector<xal_bdevice_s*> list(devices, devices + n);
    for (xal_bdevice_s* d : list) {
      if (d == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
      if (xal_status_t s = d->check_health(); s != XAL_SUCCESS) return s;
    }
    const uint32_t timeout = options != nullptr ? options->timeout_ms : 0;
    auto clique = std::make_shared<Clique>(std::move(list), timeout);
    if (xal_status_t s = clique->prepare(); s != XAL_SUCCESS) return s;
    std::vector<std::unique_ptr<PeerComm>> comms;
    for (uint32_t r = 0; r < n; ++r) {
      comms.push_back(std::make_unique<PeerComm>(PeerComm{clique, r}));
    }
    for (uint32_t r = 0; r < n; ++r) {
      out_comms[r] = reinterpret_cast<xal_bcomm_t*>(comms[r].release());
    }
    return XAL_SUCCESS;
  });
}

xal_status_t peer_comm_destroy(xal_bcomm_t* comm) {
  if (comm == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  std::unique_ptr<PeerComm> owned(as_comm(comm));
  xal_backend_s* backend = owned->clique->backend();
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    std::shared_ptr<Clique> clique = std::move(owned->clique);
    owned.reset();
    if (clique.use_count() > 1) return XAL_SUCCESS;  // other ranks remain
    // The last rank: the queued calls end (done, timed out, or woken by an
    // abort) before the clique is freed here. Calls a device reset dropped
    // never end: then the clique is left allocated rather than freed under
    // a host function that might still run.
    const uint32_t wait_ms = std::max<uint32_t>(clique->timeout_ms(), 10000);
    if (!clique->wait_calls(wait_ms)) {
      clique->abort();
      if (!clique->wait_calls(1000)) {
        backend->log(XAL_LOG_WARNING,
                     "cuda: a destroyed communicator still has queued collectives that "
                     "never ran; its memory is left allocated");
        auto kept = std::make_unique<std::shared_ptr<Clique>>(std::move(clique));
        kept.release();  // left allocated on purpose
      }
    }
    return XAL_SUCCESS;
  });
}

xal_status_t peer_comm_abort(xal_bcomm_t* comm) {
  if (comm == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  as_comm(comm)->clique->abort();
  return XAL_SUCCESS;
}

xal_status_t peer_comm_get_async_error(xal_bcomm_t* comm, xal_status_t* out_error) {
  if (comm == nullptr || out_error == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  *out_error = as_comm(comm)->clique->error();
  return XAL_SUCCESS;
}

// Calls never block the caller, so a group needs nothing of its own.
xal_status_t peer_group_start(xal_backend_t*) { return XAL_SUCCESS; }
xal_status_t peer_group_end(xal_backend_t*) { return XAL_SUCCESS; }

xal_status_t peer_allreduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t count, xal_dtype_t dtype, xal_op_t op, xal_bstream_t* stream) {
  const common::CollDesc d = common::coll_desc(CollKind::kAllreduce, count, dtype, op, 0);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t peer_broadcast(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t count, xal_dtype_t dtype, uint32_t root,
                            xal_bstream_t* stream) {
  const common::CollDesc d =
      common::coll_desc(CollKind::kBroadcast, count, dtype, XAL_OP_SUM, root);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t peer_reduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                         xal_dtype_t dtype, xal_op_t op, uint32_t root, xal_bstream_t* stream) {
  const common::CollDesc d = common::coll_desc(CollKind::kReduce, count, dtype, op, root);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t peer_allgather(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t send_count, xal_dtype_t dtype, xal_bstream_t* stream) {
  const common::CollDesc d =
      common::coll_desc(CollKind::kAllgather, send_count, dtype, XAL_OP_SUM, 0);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t peer_reduce_scatter(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                                 size_t recv_count, xal_dtype_t dtype, xal_op_t op,
                                 xal_bstream_t* stream) {
  const common::CollDesc d = common::coll_desc(CollKind::kReduceScatter, recv_count, dtype, op, 0);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t peer_alltoall(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                           xal_dtype_t dtype, xal_bstream_t* stream) {
  const common::CollDesc d = common::coll_desc(CollKind::kAlltoall, count, dtype, XAL_OP_SUM, 0);
  return enqueue(comm, stream, d, send, recv);
}

}  // namespace xal::cuda
