// One rank's host step on the core's collective path: its part of a
// shared-memory Rendezvous run (xal_common/host_collective.hpp), split into
// chunks, with device memory that is not host addressable staged through
// page-locked buffers.
//
// Calls are cut into chunks of at most `chunk_bytes` (XAL_COMM_CHUNK_BYTES,
// 4 MiB by default). An elementwise collective (allreduce, broadcast,
// reduce) is cut into ranges of e = chunk_bytes / element size elements; a
// layout collective (allgather, reduce_scatter, alltoall) into ranges of
// e = chunk_bytes / (n * element size) elements of every rank block: chunk
// k covers elements [k*e, min((k+1)*e, count)) of each of the n blocks of
// an n-block buffer, so it is staged as n copies into n pieces back to
// back. Every rank cuts the same way, so the k-th chunk of every rank meets
// at the k-th run. All chunks but the last hold exactly e elements (per
// block), the last strictly fewer (possibly none), so ranks that disagree
// on the count meet a mismatch at the same run and all stop there.
// In place stays right: each in-place layout maps element i of a block of
// the input to element i of a block of the output (allgather send == recv +
// rank*count, reduce_scatter recv == send + rank*count, alltoall send ==
// recv), so chunk k's input overlaps only chunk k's output, and a chunk is
// copied in, run, and copied out in that order.
//
// A staged rank uses kSlots staging buffers each way and two extra streams
// of its device: chunk k+1's device-to-host copy (copy-in stream), chunk k's
// host run (the caller's stream) and chunk k-1's host-to-device copy
// (copy-out stream) overlap. The streams are tied by host functions and
// counters rather than events, so any backend with host functions works;
// the caller's stream stays ordered: the call's first host function
// releases the copy-in stream, its last waits for the final copy back.
// A backend without host functions runs the chunks on the calling thread.
//
// Waits between the streams time out only once the call has started on the
// caller's stream (its rank arrived): before that, a copy stream waits as
// long as the caller's stream takes to reach the call (earlier work there
// is the caller's), unless the communicator breaks. After that, a wait
// fails with TIMEOUT when the call makes no progress (no chunk copied or
// run) for 2 x the communicator's timeout + 1 s.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>

#include "../runtime.hpp"
#include "group_outcome.hpp"
#include "issue_order.hpp"
#include "staging_buffer.hpp"
#include "xal_common/host_collective.hpp"

namespace xal::core {

class HostMemory;

// A communicator's first asynchronous error. Thread-safe.
class AsyncError {
 public:
  void record(xal_status_t status);
  xal_status_t get() const;

 private:
  mutable std::mutex mu_;
  xal_status_t status_ = XAL_SUCCESS;
};

// One rendezvous of a communicator (all ranks, or the groups' leaders),
// shared by its ranks and their queued host functions. Thread-safe.
struct Exchange {
  Exchange(uint32_t n, uint32_t timeout_ms, std::shared_ptr<AsyncError> e)
      : rendezvous(n, timeout_ms), error(std::move(e)) {}
  common::Rendezvous rendezvous;
  std::shared_ptr<AsyncError> error;
};

// Chunk layout of one call (see the file comment). Plain values; thread-safe.
struct ChunkPlan {
  size_t chunks = 1;
  size_t elems = 0;  // elements of a full chunk
  common::CollDesc chunk(const common::CollDesc& d, size_t k) const;
};
// The layout of `d` on a rendezvous of `n` ranks.
ChunkPlan plan_chunks(const common::CollDesc& d, uint32_t n, size_t chunk_bytes);

// The default chunk size, or XAL_COMM_CHUNK_BYTES ("4M", "65536"; 0 turns
// chunking off). INVALID_ARGUMENT with the detail set when malformed.
// Thread-safe (reads the environment).
xal_status_t chunk_bytes_from_env(size_t* out);

// What ties one call to others, held until the call is over (its last host
// function has run): the rank's turn in its issue order, and the outcome
// the other members of the rank's native group wait for (when this rank
// takes the group's slot).
struct CallTies {
  IssueOrder::Turn turn;
  OutcomeReport report;
};

// One rank's staging state. Not thread-safe: the rank's communicator uses
// it from one thread at a time (calls on one communicator are serialised by
// the caller, as for every xal_comm_t). Its buffers and copy streams serve
// one call at a time: the rank's IssueOrder keeps a call that is queued on
// another stream from starting before the previous one is over.
class HostStep {
 public:
  static constexpr size_t kSlots = 3;
  HostStep(DeviceObj* device, HostMemory& host, size_t chunk_bytes);
  ~HostStep();  // waits for its copy streams, then frees them and buffers
  HostStep(const HostStep&) = delete;
  HostStep& operator=(const HostStep&) = delete;

  // Queues this rank's part of `d` at `slot` of `ex` on `stream`: `send` is
  // read, `recv` written (either may be 0 where the collective leaves it
  // unused at this slot). Returns an error with the detail set; failures of
  // the run itself go to ex->error, the stream (note_stream_failure) and
  // ties.report. `ties` is held until the call is over.
  xal_status_t enqueue(const std::shared_ptr<Exchange>& ex, uint32_t slot,
                       const common::CollDesc& d, xal_devptr_t send, xal_devptr_t recv,
                       xal_bstream_t* stream, CallTies ties = {});

 private:
  void* host_view(xal_devptr_t ptr, size_t bytes) const;
  void open_copy_streams();

  DeviceObj* device_;
  const xal_backend_table_t* t_;
  const size_t chunk_bytes_;
  std::array<std::unique_ptr<StagingBuffer>, kSlots> in_, out_;
  xal_bstream_t* copy_in_ = nullptr;
  xal_bstream_t* copy_out_ = nullptr;
  bool tried_streams_ = false;
};

}  // namespace xal::core
