// nccl_clique.h -- what the ranks of one ncclCommInitAll share in the NCCL
// entries (comm.cpp): their NCCL communicators, and their abort.
//
// NCCL aborts one communicator per ncclCommAbort, and a rank whose peer was
// aborted keeps waiting for it: every rank must be aborted (NCCL issue
// #863; PyTorch aborts every rank for NCCL > 2.19.3). xal's contract is
// that xal_comm_abort of one communicator ends every rank's pending calls
// with ABORTED, and the core's xal_device_reset aborts only the
// communicators with a rank on the reset device. So an abort of any rank
// aborts them all, each once.
//
// ncclCommAbort frees the communicator, so it must not run while another
// thread uses it: every NCCL call on a communicator holds a use of the
// clique (acquire/release), a call inside an open group until the group
// ends (NCCL keeps the communicator until ncclGroupEnd). An abort marks
// the clique aborted at once (no new use starts) and calls ncclCommAbort
// on every rank's communicator when no use is left: at once, or when the
// last use ends (on that thread).
//
// Thread-safe: every member may be called from any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "nccl_loader.h"

namespace xal::cuda {

class NcclClique {
 public:
  // `comms` by rank, from ncclCommInitAll; `nccl` outlives the clique.
  NcclClique(const Nccl& nccl, std::vector<ncclComm_t> comms);
  NcclClique(const NcclClique&) = delete;
  NcclClique& operator=(const NcclClique&) = delete;

  // Starts a use of rank's communicator: its handle, or null when the
  // clique was aborted (or the rank destroyed). A non-null handle stays
  // valid until the matching release().
  ncclComm_t acquire(int rank);
  // Ends a use; the last one runs an abort that was waiting for it and
  // returns ncclCommAbort's first failure (ncclSuccess otherwise).
  ncclResult_t release();

  bool aborted() const;
  // Marks every rank aborted and aborts their NCCL communicators, now or
  // when the last use ends. The first abort returns ncclCommAbort's first
  // failure when it ran them itself; later ones return ncclSuccess.
  ncclResult_t abort();

  // At destroy: the rank's communicator for ncclCommDestroy, or null when
  // the clique was aborted (the abort frees it, or has freed it).
  ncclComm_t take_for_destroy(int rank);

 private:
  // Aborts `comms` (taken from comms_ under the lock), outside the lock.
  ncclResult_t abort_now(std::vector<ncclComm_t> comms) const;

  const Nccl& nccl_;
  mutable std::mutex mutex_;
  std::vector<ncclComm_t> comms_;  // by rank; null once destroyed or aborted
  uint32_t uses_ = 0;
  bool aborted_ = false;
  bool abort_waiting_ = false;  // aborted, for the last use to run
};

}  // namespace xal::cuda
