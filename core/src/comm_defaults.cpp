// CommImpl's defaults for what a path may lack: point-to-point (and the
// v-collectives built on it) and split.
#include "collectives/comm_split.hpp"
#include "comm.hpp"
#include "error.hpp"

namespace xal::core {

xal_status_t CommImpl::p2p(std::span<const P2pOp>, StreamObj* stream) {
  return fail(stream->device, XAL_ERROR_NOT_SUPPORTED,
              cat("point-to-point is not supported on this communicator's path (",
                  description(), ")"));
}

xal_status_t CommImpl::split(const SplitArgs& args, xal_comm_t* out_comm) {
  if (SplitMeet* meet = split_meet()) return meet->arrive(args, out_comm);
  return fail(XAL_ERROR_NOT_SUPPORTED,
              cat("xal_comm_split is not supported on this communicator's path (",
                  description(), ")"));
}

}  // namespace xal::core
