// One rank's point-to-point engine on the core's paths (native without
// comm_send/comm_recv, hierarchical, across processes): the batches of
// CommImpl::p2p, queued on the rank's stream.
//
// A batch is one host function on the stream (the call's "host step"),
// with the staging copies around it when the device memory is not host
// addressable: device-to-host copies of the sends before it, host-to-device
// copies of the receives after it. The host step posts every send first
// (to the process's Mailbox, or to the transport on threads of its own for
// a peer in another process), then takes each receive in op order (a copy,
// or for kRecvReduce a reduction over all of a target's sources at once,
// rounded once), then waits until its sends were taken. A batch thus never
// waits for itself, and since every rank posts before it waits, the
// batches of one group never wait for each other in a cycle (NCCL's
// grouped semantics). Inside a group the calls of a rank on one stream
// merge into one batch as long as nothing else was kept in between.
//
// Sequences: the k-th send of rank a to rank b pairs with the k-th receive
// of b from a, counted in issue order. Failures of the host step fail the
// stream's next synchronize (note_stream_failure) and are the
// communicator's async error.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../runtime.hpp"
#include "p2p_mailbox.hpp"
#include "p2p_ops.hpp"
#include "pipeline.hpp"

namespace xal::core {

// One side of a message to or from another process: the rank's device,
// the op's device pointer, and its host view (written by receives).
struct P2pBuffer {
  DeviceObj* device = nullptr;
  xal_devptr_t ptr = 0;
  void* view = nullptr;
  size_t bytes = 0;
};

// The ranks in other processes (transport path). Thread-safe functions.
struct P2pRemote {
  std::function<bool(uint32_t rank)> is_local;
  // `b.bytes` from global rank `from` (this process) to `to`, or back;
  // `seq` is the message's sequence of that pair.
  std::function<xal_status_t(const P2pBuffer& b, uint32_t from, uint32_t to, uint64_t seq,
                             std::string* why)>
      send;
  std::function<xal_status_t(const P2pBuffer& b, uint32_t from, uint32_t to, uint64_t seq,
                             std::string* why)>
      recv;
};

// What the ranks of a communicator in one process share.
struct P2pShared {
  P2pShared(uint32_t timeout_ms, std::shared_ptr<AsyncError> e)
      : mailbox(timeout_ms), error(e ? std::move(e) : std::make_shared<AsyncError>()) {}
  Mailbox mailbox;
  std::shared_ptr<AsyncError> error;
  std::shared_ptr<const P2pRemote> remote;  // null: every rank is in this process
};

class P2pRank {
 public:
  // `key`: the rank's CommImpl, which groups its kept work into one chain.
  P2pRank(DeviceObj* device, uint32_t rank, const void* key, std::shared_ptr<P2pShared> shared)
      : device_(device), rank_(rank), key_(key), shared_(std::move(shared)) {}

  // Queues `ops` (arguments checked) on `stream`, or keeps them for
  // xal_group_end inside a group. Returns an error with the detail set.
  xal_status_t submit(std::span<const P2pOp> ops, StreamObj* stream);

  // xal_comm_abort: every pending and later message fails with ABORTED.
  void abort() { shared_->mailbox.break_with(XAL_ERROR_ABORTED, "the communicator was aborted (xal_comm_abort)"); }
  const std::shared_ptr<P2pShared>& shared() const { return shared_; }

  struct Batch {
    xal_bstream_t* stream = nullptr;
    std::vector<P2pOp> ops;
    std::vector<uint64_t> seqs;  // per op
  };

 private:
  xal_status_t flush(const Batch& b);

  DeviceObj* device_;
  const uint32_t rank_;
  const void* key_;
  std::shared_ptr<P2pShared> shared_;
  std::map<uint32_t, uint64_t> sent_, received_;  // per peer, in issue order
  std::shared_ptr<Batch> open_;  // kept inside the current group
  uint64_t open_serial_ = 0;
};

// Runs one batch's host step (p2p_step.cpp). `src`/`dst`: host views of
// each op's data (sends: read; receives: written; null for 0 elements).
// Returns the first failure with *why; never throws.
struct P2pStepInput {
  uint32_t rank = 0;
  DeviceObj* device = nullptr;  // the rank's
  P2pShared* shared = nullptr;
  const P2pRank::Batch* batch = nullptr;
  std::vector<void*> views;  // per op
};
xal_status_t run_p2p_step(const P2pStepInput& in, std::string* why) noexcept;

}  // namespace xal::core
