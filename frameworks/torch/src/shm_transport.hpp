// An xal_comm_transport_t (xal/xal_transport.h) between the processes of
// one host, over one POSIX shared-memory segment.
//
// Layout: a header (per process: an arrival counter, its pid and pid
// namespace, a little scratch), then two buffer sets, each with one slot
// per process and one result slot of `slot_bytes`. Every exchange runs in
// rounds of at most a slot; a round uses the set of its parity (a counter
// every process advances alike), so that a process may fill the next
// round's buffers while a slower one still reads the previous round's.
//
// Barriers: each process publishes the number of barriers it has passed
// in its own counter and waits, with FUTEX_WAIT on the shared mapping,
// until every other counter has reached it. A wait gives up at the call's
// deadline (TIMEOUT), when abort() was called or another process recorded
// a failure in the header (ABORTED), or when a peer process has exited
// (ABORTED, naming it). Any failure breaks the transport for good (later
// calls fail at once) and is recorded in the header for the others.
//
// Torch-free: the backend creates the segment and passes its name through
// the c10d Store (backend.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xal/xal_transport.h"

namespace xal::torch_backend {

class ShmTransport {
 public:
  // Creates (creator) or opens the segment `name` ("/xal_torch_..."); the
  // creator sizes it for `size` processes of `slot_bytes` slots. Throws
  // std::runtime_error with the reason.
  static std::unique_ptr<ShmTransport> open(const std::string& name, bool creator, uint32_t rank,
                                            uint32_t size, size_t slot_bytes);
  ~ShmTransport();
  ShmTransport(const ShmTransport&) = delete;
  ShmTransport& operator=(const ShmTransport&) = delete;

  // Waits (up to timeout_ms) until every process has opened the segment,
  // then (the creator) removes its name: the memory lives while mapped.
  // Throws std::runtime_error on timeout.
  void wait_attached_and_unlink(uint32_t timeout_ms);

  // The C table pointing back at this object; release deletes it.
  xal_comm_transport_t table();

  uint32_t rank() const { return rank_; }
  uint32_t size() const { return size_; }

  struct Header;

 private:
  ShmTransport(std::string name, bool creator, uint32_t rank, uint32_t size, size_t slot_bytes,
               void* base, size_t bytes);

  // Deadline-aware wait for every process to reach barrier number next_.
  xal_status_t barrier(const char* what, int64_t deadline_ns, std::string* why);
  // Fails at once when broken (locally or by another process).
  xal_status_t check_broken(std::string* why);
  void set_broken(xal_status_t s, const std::string& why);
  xal_status_t finish(const char* what, xal_status_t s, const std::string& why, char* message,
                      size_t message_size);

  char* slot(uint64_t round, uint32_t p) const;
  char* result(uint64_t round) const;

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

  const std::string name_;
  bool creator_;
  bool unlinked_ = false;
  const uint32_t rank_, size_;
  const size_t slot_bytes_;
  void* base_;
  size_t bytes_;
  Header* header_;
  char* data_;
  std::vector<uint32_t> ranks_per_process_;
  uint32_t next_ = 0;      // barriers passed by this process (mod 2^32)
  uint64_t round_ = 0;     // rounds run by this process
  std::atomic<bool> aborted_{false};
  xal_status_t broken_ = XAL_SUCCESS;  // only the leader thread touches it
  std::string broken_why_;
};

}  // namespace xal::torch_backend
