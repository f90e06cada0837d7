#include "mpi_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "xal_common/reduce.hpp"

namespace xal::mpi {

namespace {

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

}  // namespace

MpiLock::MpiLock(bool serialize) : held_(serialize) {
  if (held_) g_mpi_mutex.lock();
}
MpiLock::~MpiLock() {
  if (held_) g_mpi_mutex.unlock();
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

MPI_Op mpi_op(xal_dtype_t dtype, xal_op_t op) {
  if (dtype == XAL_DTYPE_F16 || dtype == XAL_DTYPE_BF16) return half_mpi_op(dtype, op);
  switch (op) {
    case XAL_OP_PROD: return MPI_PROD;
    case XAL_OP_MIN: return MPI_MIN;
    case XAL_OP_MAX: return MPI_MAX;
    default: return MPI_SUM;
  }
}

void parallel_reduce(xal_dtype_t dtype, xal_op_t op, void* acc, std::span<const void* const> srcs,
                     size_t count) {
  const size_t es = common::dtype_size(dtype);
  const size_t grain = std::max<size_t>(1024, (size_t{256} << 10) / es);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, count, grain),
                    [&](const tbb::blocked_range<size_t>& r) {
                      const size_t off = r.begin() * es;
                      std::vector<const void*> from;
                      for (const void* s : srcs) from.push_back(static_cast<const char*>(s) + off);
                      void* to[] = {static_cast<char*>(acc) + off};
                      common::reduce(dtype, op, to, from, r.size(), 1);
                    });
}

void poll_pause(Clock::duration waited) {
  static const auto hot = [] {
    long long us = 1000;
    if (const char* v = std::getenv("XAL_MPI_HOT_POLL_US"); v && *v) {
      char* end = nullptr;
      const long long n = std::strtoll(v, &end, 10);
      if (*end == '\0' && n >= 0 && n <= 10'000'000) us = n;
    }
    return std::chrono::microseconds(us);
  }();
  if (waited < hot) std::this_thread::yield();
  else std::this_thread::sleep_for(std::chrono::microseconds(50));
}

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(len));
}

xal_status_t wait_requests(std::span<MPI_Request> requests, Clock::time_point deadline,
                           uint32_t timeout_ms, bool serialize, const std::atomic<bool>* aborted,
                           std::string* why) {
  const auto start = Clock::now();
  for (;;) {
    int done = 0;
    int rc;
    {
      MpiLock lock(serialize);
      rc = requests.empty() ? MPI_SUCCESS
                            : MPI_Testall(static_cast<int>(requests.size()), requests.data(),
                                          &done, MPI_STATUSES_IGNORE);
    }
    if (rc != MPI_SUCCESS) return *why = mpi_error(rc), XAL_ERROR_BACKEND;
    if (done || requests.empty()) return XAL_SUCCESS;
    if (aborted && aborted->load()) return *why = "aborted (xal_comm_abort)", XAL_ERROR_ABORTED;
    const auto now = Clock::now();
    if (now >= deadline)
      return *why = "no answer from every process within " + std::to_string(timeout_ms) + " ms",
             XAL_ERROR_TIMEOUT;
    poll_pause(now - start);
  }
}

xal_status_t wait_request(MPI_Request& request, uint32_t timeout_ms, bool serialize,
                          const std::atomic<bool>* aborted, std::string* why) {
  return wait_requests(std::span<MPI_Request>(&request, 1),
                       Clock::now() + std::chrono::milliseconds(timeout_ms), timeout_ms,
                       serialize, aborted, why);
}

}  // namespace xal::mpi
