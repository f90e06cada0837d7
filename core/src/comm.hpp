// Communicator implementations behind xal_comm_t. api_comm.cpp checks the
// arguments and dispatches to a CommImpl; each path (native: one backend's
// library; hierarchical: mixed backends, in core/src/collectives/) builds
// one CommImpl per rank.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collectives/p2p_ops.hpp"
#include "runtime.hpp"

namespace xal::core {

class SplitMeet;

// One rank's part of xal_comm_split, checked by the API layer.
struct SplitArgs {
  uint32_t rank = 0;  // in the parent
  uint32_t size = 0;  // of the parent
  int32_t color = 0;
  int32_t key = 0;
  uint32_t timeout_ms = 0;  // the child's
};

// One rank's communicator. Buffers and stream are already checked.
class CommImpl {
 public:
  virtual ~CommImpl() = default;
  virtual uint32_t path() const = 0;  // xal_comm_path_t
  virtual std::string description() const = 0;
  virtual void* native() = 0;  // backend object for xal_handle_get_native
  virtual xal_status_t abort() = 0;
  virtual xal_status_t async_error(xal_status_t* out) = 0;
  virtual xal_status_t allreduce(xal_devptr_t send, xal_devptr_t recv,
                                 size_t count, xal_dtype_t dtype, xal_op_t op,
                                 StreamObj* stream) = 0;
  virtual xal_status_t broadcast(xal_devptr_t send, xal_devptr_t recv,
                                 size_t count, xal_dtype_t dtype, uint32_t root,
                                 StreamObj* stream) = 0;
  virtual xal_status_t reduce(xal_devptr_t send, xal_devptr_t recv,
                              size_t count, xal_dtype_t dtype, xal_op_t op,
                              uint32_t root, StreamObj* stream) = 0;
  virtual xal_status_t allgather(xal_devptr_t send, xal_devptr_t recv,
                                 size_t send_count, xal_dtype_t dtype,
                                 StreamObj* stream) = 0;
  virtual xal_status_t reduce_scatter(xal_devptr_t send, xal_devptr_t recv,
                                      size_t recv_count, xal_dtype_t dtype,
                                      xal_op_t op, StreamObj* stream) = 0;
  virtual xal_status_t alltoall(xal_devptr_t send, xal_devptr_t recv,
                                size_t count, xal_dtype_t dtype,
                                StreamObj* stream) = 0;

  // Point-to-point (ABI 1.1). `p2p` queues a batch of sends and receives of
  // this rank on `stream` as one unit: every send is posted before any
  // receive waits, so a batch never waits for itself; inside a group the
  // batches of consecutive calls merge (NCCL's grouped semantics). The
  // v-collectives (vcollectives.hpp) are batches. send and recv are batches
  // of one. Arguments are checked by the API layer. The defaults say that
  // the path has no point-to-point.
  virtual xal_status_t p2p(std::span<const P2pOp> ops, StreamObj* stream);
  xal_status_t send(xal_devptr_t send, size_t count, xal_dtype_t dtype, uint32_t peer,
                    StreamObj* stream) {
    const P2pOp op{P2pOp::Kind::kSend, peer, send, count, dtype};
    return p2p({&op, 1}, stream);
  }
  xal_status_t recv(xal_devptr_t recv, size_t count, xal_dtype_t dtype, uint32_t peer,
                    StreamObj* stream) {
    const P2pOp op{P2pOp::Kind::kRecv, peer, recv, count, dtype};
    return p2p({&op, 1}, stream);
  }
  // xal_comm_split: this rank's part (rank `rank` of `size` in the parent
  // whose public handle is `self`). Writes the child's handle, or NULL for a
  // negative color. Inside a group the meeting runs at xal_group_end.
  virtual xal_status_t split(const SplitArgs& args, xal_comm_t* out_comm);
  // The meeting of the ranks of this process for split (comm_split.hpp);
  // null where the path has none.
  virtual SplitMeet* split_meet() { return nullptr; }
};

// The native path: every device of one backend that has comm_create.
// Fills `out` with one impl per device, or returns an error (detail set).
xal_status_t create_native_comms(std::span<DeviceObj* const> devices,
                                 uint32_t timeout_ms,
                                 std::vector<std::unique_ptr<CommImpl>>& out);

// True when a backend's comm_create said its collective library cannot
// serve these devices (NOT_SUPPORTED, BACKEND_UNAVAILABLE: no NCCL, say):
// the core's path runs those ranks instead. Any other failure (BACKEND,
// INTERNAL, a device error) is returned to the caller (COLLECTIVES.md).
// Thread-safe.
bool native_failure_can_fall_back(xal_status_t status);

// Logs a warning that `backend`'s native collectives failed (with the
// calling thread's last error detail) and that the core's path runs
// instead. Thread-safe.
void warn_native_fallback(const Backend* backend);

// Group calls (api_comm.cpp). Inside xal_group_start/end on the calling
// thread, keeps `work` for xal_group_end. That cuts the kept work into
// chains: work of one `key` (a rank) or of one stream is in one chain, in
// issue order (so each stream gets its work in the order it was issued,
// whichever communicators it is of). Each chain runs on a thread of its
// own, all chains concurrently: a backend that runs a collective's host
// step on the calling thread then does not block the ranks of other
// chains. Returns false outside a group: the caller runs `work` itself.
// The work runs only if the communicator and stream of the collective that
// kept it (note_group_call) are still live at xal_group_end.
bool defer_to_group_end(const void* key, std::function<xal_status_t()> work);

// The public handles of the collective being checked on this thread, for
// defer_to_group_end (api_collective.cpp calls it before the path runs).
void note_group_call(xal_comm_t comm, xal_stream_t stream);

// Makes one communicator per device (rank i on devices[i]) through the
// path that xal_comm_create chooses, registered as public handles in
// `out` (devices.size() entries). Thread-safe.
xal_status_t create_comm_handles(std::span<DeviceObj* const> devices, uint32_t timeout_ms,
                                 xal_comm_t* out);

// Inside a group on this thread: the serial of the last work kept
// (defer_to_group_end) with `key` or on the stream of the call being
// checked (note_group_call), so that a caller can tell whether its own kept
// work is still the last of its rank and stream; 0 when there is none
// (outside a group too). Serials are unique in the process.
uint64_t last_kept_serial(const void* key);

// The timeout of a new communicator: options->timeout_ms, else
// XAL_COMM_TIMEOUT_MS, else the default (api_comm.cpp).
uint32_t comm_timeout_from(const xal_comm_options_t* options);

}  // namespace xal::core
