// The MPI side of a communicator across processes: an xal_comm_transport_t
// (xal/xal_transport.h) over a duplicate of the caller's MPI communicator.
// Every exchange is a non-blocking MPI collective polled with MPI_Test until
// it completes, the deadline passes (TIMEOUT) or abort() is called
// (ABORTED). After either, the transport is broken: the request that did not
// complete is left pending (MPI cannot cancel a collective), and every later
// call fails at once with the same status.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "xal/xal_transport.h"

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

// Waits for `request` until `timeout_ms` passes or `*aborted` turns true.
// Returns XAL_SUCCESS, XAL_ERROR_TIMEOUT, XAL_ERROR_ABORTED or
// XAL_ERROR_BACKEND (MPI failed); *why says which.
xal_status_t wait_request(MPI_Request& request, uint32_t timeout_ms, bool serialize,
                          const std::atomic<bool>* aborted, std::string* why);

class MpiTransport {
 public:
  // Takes `comm` (a duplicate it frees). `ranks`: devices of each process.
  MpiTransport(MPI_Comm comm, int rank, std::vector<uint32_t> ranks, bool serialize);
  ~MpiTransport();
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  // The C struct pointing back at this object; release deletes it.
  xal_comm_transport_t table();

 private:
  static MpiTransport& self(void* user) { return *static_cast<MpiTransport*>(user); }
  // Starts an MPI call (under the lock) and waits for its request.
  template <class Start>
  xal_status_t run(const char* what, uint32_t timeout_ms, char* message, size_t message_size,
                   Start start);

  static xal_status_t allreduce(void* user, const void* send, void* recv, size_t count,
                                xal_dtype_t dtype, xal_op_t op, uint32_t timeout_ms,
                                char* message, size_t message_size);
  static xal_status_t broadcast(void* user, void* buf, size_t bytes, uint32_t root,
                                uint32_t timeout_ms, char* message, size_t message_size);
  static xal_status_t allgatherv(void* user, void* recv, const size_t* bytes,
                                 const size_t* displs, uint32_t timeout_ms, char* message,
                                 size_t message_size);
  static xal_status_t alltoallv(void* user, const void* send, const size_t* send_bytes,
                                const size_t* send_displs, void* recv, const size_t* recv_bytes,
                                const size_t* recv_displs, uint32_t timeout_ms, char* message,
                                size_t message_size);
  static void abort(void* user);
  static void release(void* user);

  // Fills int counts from size_t ones; false (with *why) when one is too big.
  bool to_int(const size_t* in, std::vector<int>& out, std::string* why) const;

  MPI_Comm comm_;
  const int rank_;
  const std::vector<uint32_t> ranks_;
  const bool serialize_;
  std::atomic<bool> aborted_{false};
  std::mutex broken_mu_;
  xal_status_t broken_ = XAL_SUCCESS;
  std::string broken_why_;
};

}  // namespace xal::mpi
