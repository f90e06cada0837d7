// The MPI side of a communicator across processes: an xal_comm_transport_t
// (xal/xal_transport.h) over a duplicate of the caller's MPI communicator.
// Every exchange is non-blocking MPI polled with MPI_Test until it
// completes, the deadline passes (TIMEOUT) or abort() is called (ABORTED);
// after abort() no request is started. After either, the transport is
// broken: requests that did not complete are left pending (MPI cannot
// cancel a collective), and every later call fails at once with the same
// status.
//
// MPI counts are `int`: an exchange larger than the piece limit (INT_MAX
// elements; pieces.hpp) runs as several MPI calls, one after another within
// the one deadline.
//
// Reduce and reduce_scatter run over point-to-point messages
// (mpi_reduce.cpp): a binomial tree, and a pairwise exchange. Measured on
// Open MPI 4.1, its MPI_Ireduce (a segmented chain for up to 4 processes
// and large buffers, one MPI_Test per segment) ran 4 to 70 times slower
// than the tree, and MPI_Ireduce_scatter 1.9 to 3.3 times slower than the
// pairwise exchange, which also reduces on several cores. Large allreduces
// take the pairwise path too (reduce_scatter, then allgather).
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "mpi_util.hpp"
#include "xal/xal_transport.h"

namespace xal::mpi {

// One per set of communicators from xal_comm_create_mpi, owned by them
// (release deletes it). Its table entries are called by one leader thread
// at a time (xal_transport.h); abort may come from any thread.
class MpiTransport {
 public:
  // Takes `comm` (a duplicate it frees). `ranks`: devices of each process.
  // `piece_limit`: the most elements (bytes for byte exchanges) per MPI call.
  MpiTransport(MPI_Comm comm, int rank, std::vector<uint32_t> ranks, bool serialize,
               size_t piece_limit);
  ~MpiTransport();
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  // The C struct pointing back at this object; release deletes it.
  xal_comm_transport_t table();

 private:
  // int arrays an MPI call reads until it completes.
  struct IntArrays {
    std::vector<int> a, b, c, d;
  };
  using Requests = std::vector<MPI_Request>;
  // One step of a reduce (mpi_reduce.cpp).
  struct ReduceStep {
    enum Kind { kCopy, kReceive, kSend } kind;
    int peer = 0;              // kReceive, kSend
    const void* from = nullptr;  // kCopy: source; kSend: what goes
    void* acc = nullptr;       // kCopy: destination; kReceive: reduced into
    size_t count = 0;
    bool partial = false;      // acc (kCopy, kReceive) or from (kSend) is partial_
  };

  static MpiTransport& self(void* user) { return *static_cast<MpiTransport*>(user); }
  // Runs `steps` steps one after another within one deadline: step i
  // starts its requests (start(i, requests), under the MPI lock) and waits
  // for them. `keep` lives until the requests complete.
  // `after(i)` runs once step i's requests completed.
  template <class Start, class After>
  xal_status_t run(const char* what, size_t steps, uint32_t timeout_ms, char* message,
                   size_t message_size, Start start, After after,
                   std::unique_ptr<IntArrays> keep = {});
  template <class Start>
  xal_status_t run(const char* what, size_t steps, uint32_t timeout_ms, char* message,
                   size_t message_size, Start start, std::unique_ptr<IntArrays> keep = {}) {
    return run(what, steps, timeout_ms, message, message_size, start, [](size_t) {},
               std::move(keep));
  }
  // Appends the steps of a binomial-tree reduce of `count` elements to
  // process `root`: send is every process's input, recv (the root's) the
  // result; send may equal recv.
  void plan_reduce(std::vector<ReduceStep>& steps, const void* send, void* recv, size_t count,
                   int root);
  // A pairwise reduce_scatter (recv: this process's block), followed by an
  // allgather into `gather` when not null (mpi_reduce.cpp).
  xal_status_t pairwise(const char* what, const void* send, void* recv,
                        std::span<const size_t> counts, xal_dtype_t dtype, xal_op_t op,
                        void* gather, uint32_t timeout_ms, char* message, size_t message_size);
  // Runs planned steps within one deadline.
  xal_status_t run_reduce(const char* what, const std::vector<ReduceStep>& steps,
                          xal_dtype_t dtype, xal_op_t op, uint32_t timeout_ms, char* message,
                          size_t message_size);
  // Fills int values from size_t ones (each within the piece limit).
  std::vector<int> to_int(const size_t* in) const;

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
  static xal_status_t reduce(void* user, const void* send, void* recv, size_t count,
                             xal_dtype_t dtype, xal_op_t op, uint32_t root, uint32_t timeout_ms,
                             char* message, size_t message_size);
  static xal_status_t reduce_scatter(void* user, const void* send, void* recv,
                                     const size_t* recv_counts, xal_dtype_t dtype, xal_op_t op,
                                     uint32_t timeout_ms, char* message, size_t message_size);
  static void abort(void* user);
  static void release(void* user);
  // Point-to-point and split (mpi_p2p.cpp).
  static xal_status_t send(void* user, const void* buf, size_t bytes, uint32_t peer, uint64_t tag,
                           uint32_t timeout_ms, char* message, size_t message_size);
  static xal_status_t recv(void* user, void* buf, size_t bytes, uint32_t peer, uint64_t tag,
                           uint32_t timeout_ms, char* message, size_t message_size);
  static xal_status_t split(void* user, int32_t color, int32_t key, xal_comm_transport_t* out_child,
                            char* message, size_t message_size);
  // The MPI tag of a message's `tag` (above the collectives' own tags).
  int p2p_tag(uint64_t tag);
  // Status of a point-to-point wait: a timeout or abort breaks the
  // transport as the collectives' do; the message is written.
  xal_status_t p2p_result(const char* what, xal_status_t s, const std::string& why, char* message,
                          size_t message_size);
  xal_status_t broken_status(const char* what, char* message, size_t message_size);

  MPI_Comm comm_;
  const int rank_;
  const std::vector<uint32_t> ranks_;
  const bool serialize_;
  const size_t limit_;
  std::atomic<bool> aborted_{false};
  std::mutex broken_mu_;
  xal_status_t broken_ = XAL_SUCCESS;
  std::string broken_why_;
  std::vector<std::unique_ptr<IntArrays>> parked_;  // read by requests left pending
  // Reduce's buffers (one call at a time; kept after a failure, as a
  // request left pending may still write them).
  std::unique_ptr<char[]> incoming_, partial_;
  std::atomic<int> tag_ub_{0};  // MPI_TAG_UB of comm_, read once
  size_t incoming_bytes_ = 0, partial_bytes_ = 0;
};

template <class Start, class After>
xal_status_t MpiTransport::run(const char* what, size_t steps, uint32_t timeout_ms, char* message,
                               size_t message_size, Start start, After after,
                               std::unique_ptr<IntArrays> keep) {
  {
    std::lock_guard lock(broken_mu_);
    if (broken_ != XAL_SUCCESS) {
      std::snprintf(message, message_size, "MPI %s: %s", what, broken_why_.c_str());
      return broken_;
    }
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string why;
  xal_status_t s = XAL_SUCCESS;
  for (size_t i = 0; i < steps && s == XAL_SUCCESS; ++i) {
    // After abort() no step starts: its requests would be left pending on
    // the caller's buffers.
    if (aborted_.load()) {
      why = "aborted (xal_comm_abort)";
      s = XAL_ERROR_ABORTED;
      break;
    }
    Requests requests;
    int rc;
    {
      MpiLock lock(serialize_);
      rc = start(i, requests);
    }
    s = rc == MPI_SUCCESS
            ? wait_requests(requests, deadline, timeout_ms, serialize_, &aborted_, &why)
            : (why = mpi_error(rc), XAL_ERROR_BACKEND);
    if (s == XAL_SUCCESS) after(i);
  }
  if (s == XAL_SUCCESS) return s;
  std::snprintf(message, message_size, "MPI %s: %s", what, why.c_str());
  std::lock_guard lock(broken_mu_);
  if (broken_ == XAL_SUCCESS) broken_ = s, broken_why_ = why;
  if (keep) parked_.push_back(std::move(keep));
  return s;
}

}  // namespace xal::mpi
