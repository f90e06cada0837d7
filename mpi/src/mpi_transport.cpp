#include "mpi_transport.hpp"

#include <chrono>
#include <climits>
#include <cstdio>
#include <thread>

#include "xal_common/reduce.hpp"

namespace xal::mpi {

namespace {

using Clock = std::chrono::steady_clock;

std::mutex g_mpi_mutex;  // every MPI call of this library below THREAD_MULTIPLE

// Halves have no MPI type: 16-bit words reduced by a user op per (dtype, op).
template <int Dtype, int Op>
void half_op(void* in, void* inout, int* len, MPI_Datatype*) {
  const void* srcs[] = {in, inout};
  void* dsts[] = {inout};
  common::reduce(static_cast<xal_dtype_t>(Dtype), static_cast<xal_op_t>(Op), dsts, srcs,
                 static_cast<size_t>(*len), 1);
}

template <int Dtype>
MPI_User_function* half_fn(xal_op_t op) {
  switch (op) {
    case XAL_OP_SUM: return half_op<Dtype, XAL_OP_SUM>;
    case XAL_OP_PROD: return half_op<Dtype, XAL_OP_PROD>;
    case XAL_OP_MIN: return half_op<Dtype, XAL_OP_MIN>;
    default: return half_op<Dtype, XAL_OP_MAX>;
  }
}

// The user op for a half dtype, made once per process. Caller holds the
// MPI lock when serialising.
MPI_Op half_mpi_op(xal_dtype_t dtype, xal_op_t op) {
  static std::mutex mu;
  static MPI_Op ops[2][4] = {{MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL},
                             {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL}};
  std::lock_guard lock(mu);
  const int d = dtype == XAL_DTYPE_F16 ? 0 : 1;
  MPI_Op& slot = ops[d][op];
  if (slot == MPI_OP_NULL)
    MPI_Op_create(d == 0 ? half_fn<XAL_DTYPE_F16>(op) : half_fn<XAL_DTYPE_BF16>(op), 1, &slot);
  return slot;
}

MPI_Datatype mpi_type(xal_dtype_t dtype) {
  switch (dtype) {
    case XAL_DTYPE_I8: return MPI_INT8_T;
    case XAL_DTYPE_U8: return MPI_UINT8_T;
    case XAL_DTYPE_I32: return MPI_INT32_T;
    case XAL_DTYPE_U32: return MPI_UINT32_T;
    case XAL_DTYPE_I64: return MPI_INT64_T;
    case XAL_DTYPE_U64: return MPI_UINT64_T;
    case XAL_DTYPE_F32: return MPI_FLOAT;
    case XAL_DTYPE_F64: return MPI_DOUBLE;
    default: return MPI_UINT16_T;  // f16, bf16
  }
}

MPI_Op mpi_op(xal_op_t op) {
  switch (op) {
    case XAL_OP_PROD: return MPI_PROD;
    case XAL_OP_MIN: return MPI_MIN;
    case XAL_OP_MAX: return MPI_MAX;
    default: return MPI_SUM;
  }
}

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(len));
}

}  // namespace

MpiLock::MpiLock(bool serialize) : held_(serialize) {
  if (held_) g_mpi_mutex.lock();
}
MpiLock::~MpiLock() {
  if (held_) g_mpi_mutex.unlock();
}

xal_status_t wait_request(MPI_Request& request, uint32_t timeout_ms, bool serialize,
                          const std::atomic<bool>* aborted, std::string* why) {
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int done = 0;
    int rc;
    {
      MpiLock lock(serialize);
      rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) return *why = mpi_error(rc), XAL_ERROR_BACKEND;
    if (done) return XAL_SUCCESS;
    if (aborted && aborted->load()) return *why = "aborted (xal_comm_abort)", XAL_ERROR_ABORTED;
    const auto now = Clock::now();
    if (now >= deadline)
      return *why = "no answer from every process within " + std::to_string(timeout_ms) + " ms",
             XAL_ERROR_TIMEOUT;
    // MPI progresses inside MPI_Test: poll hot at first, then gently.
    if (now - start < std::chrono::milliseconds(2)) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

MpiTransport::MpiTransport(MPI_Comm comm, int rank, std::vector<uint32_t> ranks, bool serialize)
    : comm_(comm), rank_(rank), ranks_(std::move(ranks)), serialize_(serialize) {}

MpiTransport::~MpiTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  MpiLock lock(serialize_);
  MPI_Comm_free(&comm_);  // with a request left pending, MPI frees it later
}

xal_comm_transport_t MpiTransport::table() {
  xal_comm_transport_t t{};
  t.struct_size = sizeof t;
  t.user = this;
  t.process_rank = static_cast<uint32_t>(rank_);
  t.process_count = static_cast<uint32_t>(ranks_.size());
  t.ranks_per_process = ranks_.data();
  t.allreduce = allreduce;
  t.broadcast = broadcast;
  t.allgatherv = allgatherv;
  t.alltoallv = alltoallv;
  t.abort = abort;
  t.release = release;
  return t;
}

template <class Start>
xal_status_t MpiTransport::run(const char* what, uint32_t timeout_ms, char* message,
                               size_t message_size, Start start) {
  {
    std::lock_guard lock(broken_mu_);
    if (broken_ != XAL_SUCCESS) {
      std::snprintf(message, message_size, "MPI %s: %s", what, broken_why_.c_str());
      return broken_;
    }
  }
  std::string why;
  MPI_Request request = MPI_REQUEST_NULL;
  int rc;
  {
    MpiLock lock(serialize_);
    rc = start(&request);
  }
  xal_status_t s = rc == MPI_SUCCESS ? wait_request(request, timeout_ms, serialize_, &aborted_, &why)
                                     : (why = mpi_error(rc), XAL_ERROR_BACKEND);
  if (s == XAL_SUCCESS) return s;
  std::snprintf(message, message_size, "MPI %s: %s", what, why.c_str());
  std::lock_guard lock(broken_mu_);
  if (broken_ == XAL_SUCCESS) broken_ = s, broken_why_ = why;
  return s;
}

bool MpiTransport::to_int(const size_t* in, std::vector<int>& out, std::string* why) const {
  out.resize(ranks_.size());
  for (size_t p = 0; p < ranks_.size(); ++p) {
    if (in[p] > static_cast<size_t>(INT_MAX)) {
      *why = std::to_string(in[p]) + " bytes exceed MPI's int counts";
      return false;
    }
    out[p] = static_cast<int>(in[p]);
  }
  return true;
}

xal_status_t MpiTransport::allreduce(void* user, const void* send, void* recv, size_t count,
                                     xal_dtype_t dtype, xal_op_t op, uint32_t timeout_ms,
                                     char* message, size_t message_size) {
  MpiTransport& t = self(user);
  if (count > static_cast<size_t>(INT_MAX)) {
    std::snprintf(message, message_size, "MPI allreduce: %zu elements exceed MPI's int counts",
                  count);
    return XAL_ERROR_NOT_SUPPORTED;
  }
  const bool half = dtype == XAL_DTYPE_F16 || dtype == XAL_DTYPE_BF16;
  return t.run("allreduce", timeout_ms, message, message_size, [&](MPI_Request* r) {
    const MPI_Op mop = half ? half_mpi_op(dtype, op) : mpi_op(op);
    return MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, static_cast<int>(count),
                          mpi_type(dtype), mop, t.comm_, r);
  });
}

xal_status_t MpiTransport::broadcast(void* user, void* buf, size_t bytes, uint32_t root,
                                     uint32_t timeout_ms, char* message, size_t message_size) {
  MpiTransport& t = self(user);
  if (bytes > static_cast<size_t>(INT_MAX)) {
    std::snprintf(message, message_size, "MPI broadcast: %zu bytes exceed MPI's int counts", bytes);
    return XAL_ERROR_NOT_SUPPORTED;
  }
  return t.run("broadcast", timeout_ms, message, message_size, [&](MPI_Request* r) {
    return MPI_Ibcast(buf, static_cast<int>(bytes), MPI_BYTE, static_cast<int>(root), t.comm_, r);
  });
}

xal_status_t MpiTransport::allgatherv(void* user, void* recv, const size_t* bytes,
                                      const size_t* displs, uint32_t timeout_ms, char* message,
                                      size_t message_size) {
  MpiTransport& t = self(user);
  std::vector<int> counts, offsets;
  std::string why;
  if (!t.to_int(bytes, counts, &why) || !t.to_int(displs, offsets, &why)) {
    std::snprintf(message, message_size, "MPI allgather: %s", why.c_str());
    return XAL_ERROR_NOT_SUPPORTED;
  }
  return t.run("allgather", timeout_ms, message, message_size, [&](MPI_Request* r) {
    return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts.data(),
                           offsets.data(), MPI_BYTE, t.comm_, r);
  });
}

xal_status_t MpiTransport::alltoallv(void* user, const void* send, const size_t* send_bytes,
                                     const size_t* send_displs, void* recv,
                                     const size_t* recv_bytes, const size_t* recv_displs,
                                     uint32_t timeout_ms, char* message, size_t message_size) {
  MpiTransport& t = self(user);
  std::vector<int> sc, sd, rc, rd;
  std::string why;
  if (!t.to_int(send_bytes, sc, &why) || !t.to_int(send_displs, sd, &why) ||
      !t.to_int(recv_bytes, rc, &why) || !t.to_int(recv_displs, rd, &why)) {
    std::snprintf(message, message_size, "MPI alltoall: %s", why.c_str());
    return XAL_ERROR_NOT_SUPPORTED;
  }
  return t.run("alltoall", timeout_ms, message, message_size, [&](MPI_Request* r) {
    return MPI_Ialltoallv(send, sc.data(), sd.data(), MPI_BYTE, recv, rc.data(), rd.data(),
                          MPI_BYTE, t.comm_, r);
  });
}

void MpiTransport::abort(void* user) { self(user).aborted_ = true; }

void MpiTransport::release(void* user) {
  std::unique_ptr<MpiTransport> owned(static_cast<MpiTransport*>(user));
}

}  // namespace xal::mpi
