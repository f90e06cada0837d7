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
// Point-to-point (send, recv; shm_p2p.cpp): one channel per ordered pair
// of processes with a few cells, each holding one message in flight; a
// message is matched by (sender, tag) and moves through its cell in chunks.
// A send never waits for its receiver: a message that fits one chunk, with a
// cell free, is written at once; any other is copied and handed over by a
// thread of its own (a "streamer"; the transport's release waits for
// them), so that sends posted before their receives cannot deadlock. A
// streamer's failure breaks the transport. A receive of another size fails
// with COLLECTIVE_MISMATCH and
// leaves the transport usable; any other failure breaks it, as for the
// collectives. send and recv may run on several threads at once.
//
// Split (shm_split.cpp): collective over the processes; each color's
// processes get a segment of their own (the same slot size), made by the
// first of them, whose name reaches the others through this segment.
//
// Torch-free: the backend creates the segment and passes its name through
// the c10d Store (backend.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#include "shared_blocks.hpp"
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

  // Allreduces this process ran in place from shared blocks (any thread).
  uint64_t zero_copy_allreduces() const { return zero_copy_calls_.load(); }

  // A name for a new segment, unique on the host ("/xal_torch_<pid>_<random>").
  static std::string unique_name();
  // How long split waits for the other processes (default 60 s).
  void set_split_timeout(uint32_t ms) { split_timeout_ms_ = ms; }
  // The transport the last split of this process made (its table went to
  // xal, which owns it), or null; cleared by the call. The caller thread
  // of xal_comm_split only.
  ShmTransport* take_split_child() { return std::exchange(split_child_, nullptr); }

  // The lowest process (from `first` on, wrapping around) with a message
  // offered to this process and not yet taken, or -1 if none. Any thread;
  // a hint only (another receiving thread may take the message first).
  int offered_from(uint32_t first) const;

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
  // An in-place allreduce of `bytes` >= kZeroCopyMinBytes (every process
  // calls it for such a call): when every process's buffer is a shared
  // block (shared_tensors.cpp) each reduces its share straight from the
  // others' buffers and copies the others' shares from them (*done =
  // true); else *done = false after two barriers, and the call goes on
  // through the slots.
  xal_status_t zero_copy_allreduce(const void* send, void* recv, size_t count,
                                   xal_dtype_t dtype, xal_op_t op, int64_t deadline,
                                   std::string* why, bool* done);
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
  static xal_status_t send(void* user, const void* buf, size_t bytes, uint32_t peer,
                           uint64_t tag, uint32_t timeout_ms, char* message, size_t message_size);
  static xal_status_t recv(void* user, void* buf, size_t bytes, uint32_t peer, uint64_t tag,
                           uint32_t timeout_ms, char* message, size_t message_size);
  static xal_status_t split(void* user, int32_t color, int32_t key,
                            xal_comm_transport_t* out_child, char* message, size_t message_size);
  static void abort(void* user);
  static void release(void* user);

  // Waits until ready() holds, watching `word` (a futex word that changes
  // when it may have): gives up at the deadline, when the transport is
  // broken, or when process `peer` has ended.
  template <class Ready>
  xal_status_t wait_for(std::atomic<uint32_t>* word, Ready ready, uint32_t peer, const char* what,
                        int64_t deadline, std::string* why);
  char* cell_data(uint32_t from, uint32_t to, uint32_t cell) const;
  // Writes one message into a cell of the channel to `peer` and hands it
  // over chunk by chunk; blocks until the last chunk is in the cell.
  // `cell` >= 0: that cell is already claimed.
  xal_status_t send_now(const char* buf, size_t bytes, uint32_t peer, uint64_t tag, int cell,
                        int64_t deadline, std::string* why);
  // Claims a free cell of the channel to `peer` without waiting, or -1.
  int try_claim(uint32_t peer);
  // Joins the streamers that have finished (all: every one, waiting).
  void join_streamers(bool all);
  void finish_cell(uint32_t from, uint32_t to, uint32_t cell);

  const std::string name_;
  bool creator_;
  bool unlinked_ = false;
  const uint32_t rank_, size_;
  const size_t slot_bytes_;
  void* base_;
  size_t bytes_;
  Header* header_;
  char* data_;
  size_t cell_bytes_;  // one chunk of a message
  char* p2p_data_;
  std::vector<uint32_t> ranks_per_process_;
  struct Streamer {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex streamers_mu_;
  std::vector<Streamer> streamers_;
  uint32_t next_ = 0;      // barriers passed by this process (mod 2^32)
  uint64_t round_ = 0;     // rounds run by this process
  std::atomic<bool> aborted_{false};
  uint32_t split_timeout_ms_ = 60'000;
  PeerBlocks peers_;  // the other processes' shared blocks mapped here (allreduce only)
  std::atomic<uint64_t> zero_copy_calls_{0};
  ShmTransport* split_child_ = nullptr;
  std::mutex broken_mu_;  // guards broken_ and broken_why_ (send/recv run on many threads)
  xal_status_t broken_ = XAL_SUCCESS;
  std::string broken_why_;
};

}  // namespace xal::torch_backend
