// peer_clique.h -- the ranks of one communicator of the collectives without
// NCCL (peer_comm.cpp): where the ranks' calls meet, and the collectives
// themselves, run on the communicator's own streams.
//
// The k-th call of every rank meets the k-th call of every other (as NCCL
// pairs calls). Each rank arrives on a host function thread of its stream;
// the last to arrive runs the whole collective (peer_algorithms.cpp) and
// waits for it, while every rank's stream waits for its host function.
//
// Failure semantics, as the core's own path: a rank that does not arrive
// within the timeout breaks the clique (TIMEOUT, sticky; once every rank is
// there the collective runs as long as it takes); abort wakes every waiting
// rank (ABORTED, sticky); ranks that disagree on the call get
// COLLECTIVE_MISMATCH; a failed copy or kernel is the clique's error.
//
// No memory is allocated or freed while a collective runs: a free (and
// perhaps an allocation) waits for the device's streams, and the ranks'
// streams are the ones waiting. reserve() allocates the scratch memory a
// call needs when it is queued, on the caller's thread. For the same
// reason no module or kernel is loaded and no peer access enabled while
// one runs (with CUDA's lazy loading, the default since 12.2, loading may
// wait for the context's streams, as may cuCtxEnablePeerAccess): prepare()
// does all of it when the communicator is made.
//
// Thread-safe: every public member may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backend.h"
#include "kernels.h"
#include "xal_common/host_collective.hpp"

namespace xal::cuda {

class Clique {
 public:
  // `devices` are rank 0..n-1; timeout_ms 0 waits for ever. Not owned.
  Clique(std::vector<xal_bdevice_s*> devices, uint32_t timeout_ms);
  // Waits for the own streams and frees them and the scratch memory. The
  // caller makes sure no call is in flight (wait_calls()).
  ~Clique();
  Clique(const Clique&) = delete;
  Clique& operator=(const Clique&) = delete;

  // On the caller's thread, before any call: checks that each device's
  // streams can have their host functions on xal's threads (NOT_SUPPORTED,
  // recorded, when not: the core then takes its own path), creates the
  // communicator's own stream on each device (non-blocking: a legacy
  // default stream, PyTorch's say, would otherwise wait for it, and it for
  // that), loads the embedded kernels on each device and enables peer
  // access between every two devices.
  xal_status_t prepare();

  uint32_t size() const { return static_cast<uint32_t>(devices_.size()); }
  uint32_t timeout_ms() const { return timeout_ms_; }
  xal_bdevice_s* device(uint32_t rank) const { return devices_[rank]; }
  xal_backend_s* backend() const { return devices_[0]->backend; }

  // The scratch memory `rank` needs for `desc` (peer_algorithms.cpp).
  size_t scratch_bytes(uint32_t rank, const common::CollDesc& desc) const;
  // Makes rank's scratch memory at least `bytes` (the caller's thread, when
  // a call is queued). Earlier, smaller buffers stay allocated.
  xal_status_t reserve(uint32_t rank, size_t bytes);

  // A call of `rank` is being queued: its sequence number (call order per
  // rank). It counts as in flight until call_ended(); calls in flight keep
  // the clique from being freed.
  uint64_t queue_call(uint32_t rank);
  void call_ended();
  // Whether every call ended within `ms` (the last comm_destroy).
  bool wait_calls(uint32_t ms);

  // Rank `rank` reached call `seq` on its stream (a host function thread):
  // waits for the other ranks, or runs the collective if it is the last.
  void arrive(uint32_t rank, uint64_t seq, const common::CollDesc& desc, xal_devptr_t send,
              xal_devptr_t recv);

  xal_status_t error() const;
  std::string error_message() const;
  // Breaks the clique with ABORTED and wakes every waiting rank, also those
  // whose collective runs (a hung device); their buffers are then undefined.
  void abort();
  // Breaks the clique with `status` (sticky), waking every waiting rank.
  void fail(xal_status_t status, const std::string& message);

 private:
  struct Part {
    xal_devptr_t send = 0;
    xal_devptr_t recv = 0;
  };
  struct Call {
    common::CollDesc desc;
    std::vector<Part> parts;
    std::vector<bool> here;  // per rank
    uint32_t first = 0;      // the rank that came first; desc is its call
    uint32_t arrived = 0;
    uint32_t left = 0;
    std::string mismatch;    // how a rank's call differs, "" while they agree
    bool done = false;
  };
  struct Scratch {
    xal_devptr_t ptr = 0;  // the largest, in use
    size_t bytes = 0;
    std::vector<xal_devptr_t> all;
  };

  void fail_locked(xal_status_t status, const std::string& message);

  // peer_algorithms.cpp: the whole collective, every rank's buffers known;
  // waits for it. Called without the lock.
  xal_status_t run(const common::CollDesc& d, const std::vector<Part>& p);
  xal_status_t run_allreduce(const common::CollDesc& d, const std::vector<Part>& p);
  xal_status_t run_reduce(const common::CollDesc& d, const std::vector<Part>& p);
  xal_status_t run_broadcast(const common::CollDesc& d, const std::vector<Part>& p);
  xal_status_t reduce_slices(const common::CollDesc& d, const std::vector<Part>& p,
                             const std::vector<xal_devptr_t>& acc);
  xal_status_t gather_slices(const common::CollDesc& d, const std::vector<Part>& p,
                             uint32_t except);
  xal_status_t run_alltoall(const common::CollDesc& d, const std::vector<Part>& p);
  xal_status_t scratch(uint32_t rank, size_t bytes, xal_devptr_t* out);
  xal_status_t copy(uint32_t to, xal_devptr_t dst, uint32_t from, xal_devptr_t src,
                    size_t bytes);
  template <typename Src>
  xal_status_t reduce_into(uint32_t at, xal_devptr_t acc, const common::CollDesc& d, Src src);
  xal_status_t sync_all();

  const std::vector<xal_bdevice_s*> devices_;
  const uint32_t timeout_ms_;
  std::vector<xal_bstream_t*> streams_;
  std::vector<BuiltinKernels> kernels_;  // by rank, from prepare()
  std::vector<Scratch> scratch_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::map<uint64_t, Call> calls_;
  std::vector<uint64_t> next_call_;
  uint64_t in_flight_ = 0;
  bool aborted_ = false;
  xal_status_t error_ = XAL_SUCCESS;
  std::string error_message_;
};

}  // namespace xal::cuda
