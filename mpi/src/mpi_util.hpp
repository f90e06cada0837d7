// MPI helpers of libxal_mpi: the process-wide lock below
// MPI_THREAD_MULTIPLE, xal's dtypes and ops as MPI's, and the polling wait
// for non-blocking requests (until done, a deadline or an abort).
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "xal/xal.h"

namespace xal::mpi {

// Serialises MPI calls when MPI runs below MPI_THREAD_MULTIPLE.
class MpiLock {
 public:
  explicit MpiLock(bool serialize);
  ~MpiLock();
  MpiLock(const MpiLock&) = delete;
  MpiLock& operator=(const MpiLock&) = delete;

 private:
  bool held_;
};

// The MPI datatype carrying `dtype` (16-bit words for f16 and bf16).
MPI_Datatype mpi_type(xal_dtype_t dtype);
// The MPI op for (dtype, op): built-in, or a user op (made once per process)
// for the halves. op is not XAL_OP_AVG. Call with the MPI lock held when
// serialising.
MPI_Op mpi_op(xal_dtype_t dtype, xal_op_t op);
// acc[i] = op over srcs (acc may be one of them), i < count, on several
// cores. op is not XAL_OP_AVG. Thread-safe.
void parallel_reduce(xal_dtype_t dtype, xal_op_t op, void* acc, std::span<const void* const> srcs,
                     size_t count);
// MPI's text for an error code.
std::string mpi_error(int code);

using Clock = std::chrono::steady_clock;

// One pause of a loop that polls MPI (MPI progresses inside its test and
// probe calls) and has waited `waited` so far: a yield of the thread while
// the wait is young, then a sleep of 50 µs. The hot part lasts 1 ms, or
// XAL_MPI_HOT_POLL_US microseconds (read once; 0 to 10 s): short, because
// the threads that poll share the cores with the ones that copy (on 2
// cores, 4 processes' alltoallv of 64 MiB ran 10-20% faster with 0.2-1 ms
// than with 20 ms). Thread-safe.
void poll_pause(Clock::duration waited);

// Waits for every request until `deadline` passes (`timeout_ms`, the
// configured timeout, goes into the message) or `*aborted` turns true.
// Returns XAL_SUCCESS, XAL_ERROR_TIMEOUT, XAL_ERROR_ABORTED or
// XAL_ERROR_BACKEND (MPI failed); *why says which.
xal_status_t wait_requests(std::span<MPI_Request> requests, Clock::time_point deadline,
                           uint32_t timeout_ms, bool serialize, const std::atomic<bool>* aborted,
                           std::string* why);

// One request, `timeout_ms` from now.
xal_status_t wait_request(MPI_Request& request, uint32_t timeout_ms, bool serialize,
                          const std::atomic<bool>* aborted, std::string* why);

}  // namespace xal::mpi
