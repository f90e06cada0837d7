// The shared-memory collective engine: ranks of one process whose buffers
// are all host addressable (the mock's device memory, or page-locked
// staging buffers of the core's hierarchical path) meet at a Rendezvous and
// each does 1/n of the work over every rank's buffers.
//
// The k-th run() of every rank pairs with the k-th run() of every other, as
// NCCL pairs calls. Failure semantics:
//  - a rank that does not arrive within the timeout breaks the rendezvous:
//    TIMEOUT, sticky (every later run fails at once with it);
//  - abort() wakes every waiting rank with ABORTED, sticky too;
//  - ranks that disagree on kind, count, dtype, op or root all get
//    COLLECTIVE_MISMATCH for that call; the rendezvous stays usable.
// Thread-safe: each rank calls run() from its own thread. A rank's runs are
// one at a time: a second run() of a rank (its communicator used on two
// streams at once) waits until the first has returned, so it never takes
// the first one's place; which of the two comes first is then up to the
// threads (the core's paths order them: collectives/issue_order.hpp).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "xal/xal.h"

namespace xal::common {

enum class CollKind { kAllreduce, kBroadcast, kReduce, kAllgather, kReduceScatter, kAlltoall };

// "allreduce", "reduce_scatter", ...
const char* coll_name(CollKind kind);

// What one rank asked for. `count` is the API's count (allgather: send
// count; reduce_scatter: recv count; alltoall: per peer).
struct CollDesc {
  CollKind kind = CollKind::kAllreduce;
  size_t count = 0;
  xal_dtype_t dtype = XAL_DTYPE_F32;
  xal_op_t op = XAL_OP_SUM;
  uint32_t root = 0;
  // What XAL_OP_AVG divides the sum by: 0 means the number of ranks of the
  // rendezvous. A rendezvous of group leaders, each bringing its group's
  // sum, sets the communicator's rank count instead.
  uint32_t avg_divisor = 0;
};

// The description of a call from the API's arguments (op: XAL_OP_SUM and
// root: 0 where the collective has none).
inline CollDesc coll_desc(CollKind kind, size_t count, xal_dtype_t dtype, xal_op_t op,
                          uint32_t root) {
  CollDesc d;
  d.kind = kind;
  d.count = count;
  d.dtype = dtype;
  d.op = op;
  d.root = root;
  return d;
}

// check_dtype_op (reduce.hpp) for a call: its dtype, and its op where the
// collective reduces (allreduce, reduce, reduce_scatter; the others ignore
// it).
xal_status_t check_coll_dtype_op(const CollDesc& desc, std::string* why);

// How call `b` differs from call `a` ("count 8 vs 16"; the op and root only
// where the collective uses them), "" when the ranks agree.
std::string coll_difference(const CollDesc& b, const CollDesc& a);

// Elements a rank reads from `in` and writes to `out` for `desc` in a
// communicator of `n` ranks (0 where the buffer is unused by that rank).
size_t coll_in_elements(const CollDesc& desc, uint32_t rank, uint32_t n);
size_t coll_out_elements(const CollDesc& desc, uint32_t rank, uint32_t n);

// nccl-tests' bus bytes of one call: the bytes each rank must move, so that
// busbw = bus_bytes / time.
double coll_bus_bytes(const CollDesc& desc, uint32_t n);

// One rank's part: its description and host views of its buffers.
// A buffer of n blocks (allgather's out, reduce_scatter's in, alltoall's
// both) holds block j at element j * stride, so that a run may cover one
// element range of every block of a larger buffer; 0 means desc.count
// (the blocks are contiguous).
struct HostPart {
  CollDesc desc;
  const void* in = nullptr;
  void* out = nullptr;
  size_t in_stride = 0;
  size_t out_stride = 0;
};

// A failure of run(), with the status for the caller to report.
class CollError : public std::runtime_error {
 public:
  CollError(xal_status_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  xal_status_t status() const { return status_; }

 private:
  xal_status_t status_;
};

class Rendezvous {
 public:
  Rendezvous(uint32_t size, uint32_t timeout_ms);

  uint32_t size() const { return size_; }
  uint32_t timeout_ms() const { return timeout_ms_; }

  // Runs rank `rank`'s share of its next collective. Throws CollError.
  void run(uint32_t rank, const HostPart& part);

  // Breaks the rendezvous with ABORTED and wakes every waiting rank.
  void abort();
  // Breaks it with `status` (an error) and `message`, sticky as a timeout
  // is; no-op once broken. Wakes every waiting rank.
  void break_with(xal_status_t status, const std::string& message);
  // The sticky error (TIMEOUT, ABORTED), XAL_SUCCESS while healthy.
  xal_status_t error() const;
  // The first error of any call: the sticky error, or COLLECTIVE_MISMATCH
  // once ranks disagreed (which leaves the rendezvous usable); what
  // xal_comm_get_async_error reports.
  xal_status_t first_error() const;
  // Throws the sticky error, if any, as CollError naming `kind`.
  void throw_if_broken(CollKind kind) const;

 private:
  void barrier(std::unique_lock<std::mutex>& lock, uint32_t rank, CollKind kind);
  void check_usable(CollKind kind) const;  // caller holds mutex_
  std::string describe_mismatch() const;   // caller holds mutex_
  void work(uint32_t rank);

  const uint32_t size_;
  const uint32_t timeout_ms_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<HostPart> parts_;
  std::vector<bool> arrived_;
  std::vector<bool> running_;  // a run() of the rank is under way
  uint32_t waiting_runs_ = 0;  // runs waiting for their rank's previous one
  uint32_t count_ = 0;
  uint64_t generation_ = 0;
  xal_status_t error_ = XAL_SUCCESS;
  std::string error_message_;
  bool mismatch_ = false;
  xal_status_t first_error_ = XAL_SUCCESS;
  std::string mismatch_message_;
};

}  // namespace xal::common
