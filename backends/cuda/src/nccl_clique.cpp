// nccl_clique.cpp -- the ranks of one NCCL communicator and their abort
// (nccl_clique.h).
#include "nccl_clique.h"

#include <utility>

namespace xal::cuda {

NcclClique::NcclClique(const Nccl& nccl, std::vector<ncclComm_t> comms)
    : nccl_(nccl), comms_(std::move(comms)) {}

ncclComm_t NcclClique::acquire(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  ncclComm_t comm = aborted_ ? nullptr : comms_.at(static_cast<size_t>(rank));
  if (comm != nullptr) ++uses_;
  return comm;
}

ncclResult_t NcclClique::release() {
  std::vector<ncclComm_t> to_abort;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--uses_ != 0 || !abort_waiting_) return ncclSuccess;
    abort_waiting_ = false;
    to_abort.swap(comms_);
  }
  return abort_now(std::move(to_abort));
}

bool NcclClique::aborted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return aborted_;
}

ncclResult_t NcclClique::abort() {
  std::vector<ncclComm_t> to_abort;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_) return ncclSuccess;
    aborted_ = true;
    if (uses_ != 0) {
      abort_waiting_ = true;  // the last use runs it (release())
      return ncclSuccess;
    }
    to_abort.swap(comms_);
  }
  return abort_now(std::move(to_abort));
}

ncclComm_t NcclClique::take_for_destroy(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_ || comms_.empty()) return nullptr;
  return std::exchange(comms_.at(static_cast<size_t>(rank)), nullptr);
}

ncclResult_t NcclClique::abort_now(std::vector<ncclComm_t> comms) const {
  ncclResult_t first = ncclSuccess;
  for (ncclComm_t comm : comms) {
    if (comm == nullptr) continue;  // destroyed before the abort
    const ncclResult_t r = nccl_.ncclCommAbort(comm);
    if (first == ncclSuccess) first = r;
  }
  return first;
}

}  // namespace xal::cuda
