// nccl.cpp -- NCCL loading and the native collective entries.
#include "nccl_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "backend.h"
#include "entries.h"

struct xal_bcomm_s {
  xal_bdevice_s* device = nullptr;
  ncclComm_t comm = nullptr;
  int rank = 0;
  int size = 0;
};

namespace xal::cuda {

Nccl::~Nccl() {
  if (library_ != nullptr) dlclose(library_);
}

std::string Nccl::library_path() {
  const char* value = std::getenv("XAL_CUDA_NCCL");
  if (value == nullptr || *value == '\0') return "libnccl.so.2";
  const std::string text(value);
  if (text == "off" || text == "0") return {};
  return text;
}

std::unique_ptr<Nccl> Nccl::open(const std::string& path,
                                 std::string* out_reason) {
  std::unique_ptr<Nccl> nccl(new Nccl());
  dlerror();
  nccl->library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (nccl->library_ == nullptr) {
    const char* err = dlerror();
    *out_reason = err != nullptr ? err : path + ": cannot be opened";
    return nullptr;
  }
#define XAL_NCCL_RESOLVE(name, ret, params)                                \
  nccl->name = reinterpret_cast<ret(*) params>(dlsym(nccl->library_, #name)); \
  if (nccl->name == nullptr) {                                             \
    *out_reason = path + " is too old: missing " #name;                    \
    return nullptr;                                                        \
  }
  XAL_NCCL_SYMBOLS(XAL_NCCL_RESOLVE)
#undef XAL_NCCL_RESOLVE
  if (nccl->ncclGetVersion(&nccl->version_) != ncclSuccess) nccl->version_ = 0;
  return nccl;
}

namespace {

const char* result_name(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return "ncclUnknownResult";
  }
}

xal_status_t map_nccl(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return XAL_SUCCESS;
    case ncclInProgress: return XAL_NOT_READY;
    case ncclInvalidArgument:
    case ncclInvalidUsage: return XAL_ERROR_INVALID_ARGUMENT;
    case ncclInternalError: return XAL_ERROR_INTERNAL;
    default: return XAL_ERROR_BACKEND;
  }
}

// Reports a failed NCCL call (with ncclGetLastError's detail and `hint`);
// returns the status, or XAL_SUCCESS / XAL_NOT_READY unreported.
xal_status_t nccl_result(xal_backend_s* backend, ncclResult_t r,
                         const char* call, ncclComm_t comm,
                         const std::string& hint = {}) {
  const xal_status_t status = map_nccl(r);
  if (status == XAL_SUCCESS || status == XAL_NOT_READY) return status;
  const Nccl& n = *backend->nccl;
  std::string message = std::string("cuda: ") + call +
                        " failed: " + n.ncclGetErrorString(r);
  const char* last = n.ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') message += std::string(": ") + last;
  message += hint;
  backend->services->set_error(status, r, result_name(r), message.c_str());
  return status;
}

bool map_dtype(xal_dtype_t dtype, ncclDataType_t* out) {
  switch (dtype) {
    case XAL_DTYPE_I8: *out = ncclInt8; return true;
    case XAL_DTYPE_U8: *out = ncclUint8; return true;
    case XAL_DTYPE_I32: *out = ncclInt32; return true;
    case XAL_DTYPE_U32: *out = ncclUint32; return true;
    case XAL_DTYPE_I64: *out = ncclInt64; return true;
    case XAL_DTYPE_U64: *out = ncclUint64; return true;
    case XAL_DTYPE_F16: *out = ncclFloat16; return true;
    case XAL_DTYPE_BF16: *out = ncclBfloat16; return true;
    case XAL_DTYPE_F32: *out = ncclFloat32; return true;
    case XAL_DTYPE_F64: *out = ncclFloat64; return true;
    default: return false;
  }
}

bool map_op(xal_op_t op, ncclRedOp_t* out) {
  switch (op) {
    case XAL_OP_SUM: *out = ncclSum; return true;
    case XAL_OP_PROD: *out = ncclProd; return true;
    case XAL_OP_MIN: *out = ncclMin; return true;
    case XAL_OP_MAX: *out = ncclMax; return true;
    case XAL_OP_AVG: *out = ncclAvg; return true;
    default: return false;
  }
}

size_t dtype_size(xal_dtype_t dtype) {
  switch (dtype) {
    case XAL_DTYPE_I8: case XAL_DTYPE_U8: return 1;
    case XAL_DTYPE_F16: case XAL_DTYPE_BF16: return 2;
    case XAL_DTYPE_I32: case XAL_DTYPE_U32: case XAL_DTYPE_F32: return 4;
    default: return 8;
  }
}

// Checks what every collective needs; fills the NCCL type and op.
xal_status_t prepare(xal_bcomm_s* comm, xal_bstream_s* stream,
                     xal_dtype_t dtype, xal_op_t op, bool with_op,
                     ncclDataType_t* out_type, ncclRedOp_t* out_op) {
  xal_backend_s* backend = comm->device->backend;
  if (backend->nccl == nullptr) {
    return backend->error(XAL_ERROR_NOT_SUPPORTED, "cuda: NCCL is not loaded");
  }
  if (stream->device != comm->device) {
    return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                          "cuda: the stream is not on the communicator's "
                          "device");
  }
  if (!map_dtype(dtype, out_type)) {
    return backend->error(XAL_ERROR_INVALID_ARGUMENT, "cuda: unknown dtype");
  }
  if (with_op && !map_op(op, out_op)) {
    return backend->error(XAL_ERROR_INVALID_ARGUMENT, "cuda: unknown op");
  }
  if (xal_status_t s = comm->device->check_health(); s != XAL_SUCCESS) return s;
  const CUresult r = comm->device->make_current();
  return r == CUDA_SUCCESS ? XAL_SUCCESS
                           : backend->fail(r, "cuCtxSetCurrent", comm->device);
}

void* dev(xal_devptr_t ptr) { return reinterpret_cast<void*>(ptr); }

}  // namespace

xal_status_t comm_create(xal_bdevice_t* const* devices, uint32_t n,
                         const xal_bcomm_options_t* options,
                         xal_bcomm_t** out_comms) {
  xal_backend_s* backend = devices[0]->backend;
  return guarded(backend, [&]() -> xal_status_t {
    (void)options;  // timeouts and aborts are the core's, through comm_abort
    if (backend->nccl == nullptr) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: NCCL could not be loaded: " + backend->note);
    }
    std::vector<int> ordinals(n);
    for (uint32_t i = 0; i < n; ++i) ordinals[i] = devices[i]->device;
    std::vector<ncclComm_t> comms(n, nullptr);
    const ncclResult_t r = backend->nccl->ncclCommInitAll(
        comms.data(), static_cast<int>(n), ordinals.data());
    if (r != ncclSuccess) {
      // NCCL carries its own CUDA runtime, which may need a newer driver
      // than the one installed: say how to use xal's own collectives.
      return nccl_result(
          backend, r, "ncclCommInitAll", nullptr,
          " (NCCL " + std::to_string(backend->nccl->version()) +
              ", driver CUDA " + std::to_string(backend->driver_version) +
              "; XAL_CUDA_NCCL=off runs collectives on xal's own path)");
    }
    std::vector<std::unique_ptr<xal_bcomm_s>> made;
    for (uint32_t i = 0; i < n; ++i) {
      auto comm = std::make_unique<xal_bcomm_s>();
      comm->device = devices[i];
      comm->comm = comms[i];
      comm->rank = static_cast<int>(i);
      comm->size = static_cast<int>(n);
      made.push_back(std::move(comm));
    }
    for (uint32_t i = 0; i < n; ++i) out_comms[i] = made[i].release();
    return XAL_SUCCESS;
  });
}

xal_status_t comm_destroy(xal_bcomm_t* comm) {
  xal_backend_s* backend = comm->device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    std::unique_ptr<xal_bcomm_s> owned(comm);
    const ncclResult_t r = backend->nccl->ncclCommDestroy(comm->comm);
    return nccl_result(backend, r, "ncclCommDestroy", nullptr);
  });
}

xal_status_t comm_abort(xal_bcomm_t* comm) {
  xal_backend_s* backend = comm->device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    return nccl_result(backend, backend->nccl->ncclCommAbort(comm->comm),
                       "ncclCommAbort", nullptr);
  });
}

xal_status_t comm_get_async_error(xal_bcomm_t* comm, xal_status_t* out_error) {
  xal_backend_s* backend = comm->device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    ncclResult_t async = ncclSuccess;
    const ncclResult_t r =
        backend->nccl->ncclCommGetAsyncError(comm->comm, &async);
    if (r != ncclSuccess) {
      return nccl_result(backend, r, "ncclCommGetAsyncError", comm->comm);
    }
    *out_error = map_nccl(async);
    return XAL_SUCCESS;
  });
}

xal_status_t group_start(xal_backend_t* backend) {
  return guarded(backend, [&]() -> xal_status_t {
    if (backend->nccl == nullptr) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED, "cuda: NCCL is not loaded");
    }
    return nccl_result(backend, backend->nccl->ncclGroupStart(),
                       "ncclGroupStart", nullptr);
  });
}

xal_status_t group_end(xal_backend_t* backend) {
  return guarded(backend, [&]() -> xal_status_t {
    if (backend->nccl == nullptr) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED, "cuda: NCCL is not loaded");
    }
    return nccl_result(backend, backend->nccl->ncclGroupEnd(), "ncclGroupEnd",
                       nullptr);
  });
}

xal_status_t allreduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                       size_t count, xal_dtype_t dtype, xal_op_t op,
                       xal_bstream_t* stream) {
  xal_backend_s* backend = comm->device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    ncclDataType_t type{};
    ncclRedOp_t red{};
    if (xal_status_t s = prepare(comm, stream, dtype, op, true, &type, &red);
        s != XAL_SUCCESS)
      return s;
    return nccl_result(backend,
                       backend->nccl->ncclAllReduce(dev(send), dev(recv), count,
                                                    type, red, comm->comm,
                                                    stream->stream),
                       "ncclAllReduce", comm->comm);
  });
}

xal_status_t broadcast(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                       size_t count, xal_dtype_t dtype, uint32_t root,
                       xal_bstream_t* stream) {
  xal_backend_s* backend = comm->device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    ncclDataType_t type{};
    if (xal_status_t s =
            prepare(comm, stream, dtype, XAL_OP_SUM, false, &type, nullptr);
        s != XAL_SUCCESS)
      return s;
    return nccl_result(backend,
                       backend->nccl->ncclBroadcast(dev(send), dev(recv), count,
                                                    type, static_cast<int>(root),
                                                    comm->comm, stream->stream),
                       "ncclBroadcast", comm->comm);
  });
}

xal_status_t reduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                    size_t count, xal_dtype_t dtype, xal_op_t op, uint32_t root,
                    xal_bstream_t* stream) {
  xal_backend_s* backend = comm->device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    ncclDataType_t type{};
    ncclRedOp_t red{};
    if (xal_status_t s = prepare(comm, stream, dtype, op, true, &type, &red);
        s != XAL_SUCCESS)
      return s;
    return nccl_result(backend,
                       backend->nccl->ncclReduce(dev(send), dev(recv), count, type,
                                                 red, static_cast<int>(root),
                                                 comm->comm, stream->stream),
                       "ncclReduce", comm->comm);
  });
}

xal_status_t allgather(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                       size_t send_count, xal_dtype_t dtype,
                       xal_bstream_t* stream) {
  xal_backend_s* backend = comm->device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    ncclDataType_t type{};
    if (xal_status_t s =
            prepare(comm, stream, dtype, XAL_OP_SUM, false, &type, nullptr);
        s != XAL_SUCCESS)
      return s;
    return nccl_result(backend,
                       backend->nccl->ncclAllGather(dev(send), dev(recv),
                                                    send_count, type, comm->comm,
                                                    stream->stream),
                       "ncclAllGather", comm->comm);
  });
}

xal_status_t reduce_scatter(xal_bcomm_t* comm, xal_devptr_t send,
                            xal_devptr_t recv, size_t recv_count,
                            xal_dtype_t dtype, xal_op_t op,
                            xal_bstream_t* stream) {
  xal_backend_s* backend = comm->device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    ncclDataType_t type{};
    ncclRedOp_t red{};
    if (xal_status_t s = prepare(comm, stream, dtype, op, true, &type, &red);
        s != XAL_SUCCESS)
      return s;
    return nccl_result(backend,
                       backend->nccl->ncclReduceScatter(
                           dev(send), dev(recv), recv_count, type, red,
                           comm->comm, stream->stream),
                       "ncclReduceScatter", comm->comm);
  });
}

xal_status_t alltoall(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                      size_t count, xal_dtype_t dtype, xal_bstream_t* stream) {
  xal_backend_s* backend = comm->device->backend;
  return guarded(backend, [&]() -> xal_status_t {
    ncclDataType_t type{};
    if (xal_status_t s =
            prepare(comm, stream, dtype, XAL_OP_SUM, false, &type, nullptr);
        s != XAL_SUCCESS)
      return s;
    // Block j of send goes to rank j; block j of recv comes from rank j.
    const Nccl& n = *backend->nccl;
    const size_t block = count * dtype_size(dtype);
    ncclResult_t r = n.ncclGroupStart();
    for (int peer = 0; r == ncclSuccess && peer < comm->size; ++peer) {
      r = n.ncclSend(dev(send + block * peer), count, type, peer, comm->comm,
                     stream->stream);
      if (r == ncclSuccess) {
        r = n.ncclRecv(dev(recv + block * peer), count, type, peer, comm->comm,
                       stream->stream);
      }
    }
    const ncclResult_t ended = n.ncclGroupEnd();
    if (r == ncclSuccess) r = ended;
    return nccl_result(backend, r, "ncclSend/ncclRecv (alltoall)", comm->comm);
  });
}

}  // namespace xal::cuda
