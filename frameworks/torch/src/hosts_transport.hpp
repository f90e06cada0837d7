// An xal_comm_transport_t over processes on several hosts, through existing
// engines only: the processes of one host meet in shared memory (a
// ShmTransport over that host's processes), and the leaders (the lowest
// rank of each host) exchange between hosts through a c10d Backend over the
// leaders alone: torch's own ProcessGroupGloo, made by the Python package on
// the group's Store (xal_torch/__init__.py).
//
// Every process runs the same steps: a local step in shared memory, then
// (leaders only) a step between hosts, then a local broadcast from the
// leader. allreduce: local allreduce, leaders all-gather the hosts' partial
// results as bytes and reduce them in host order (any dtype and op, the
// same result on every host), local broadcast. broadcast: local broadcast
// on the root's host, leaders' broadcast, local broadcast elsewhere.
// allgatherv: local allgatherv, leaders all-gather each host's pieces
// (padded to the largest host), local broadcast of the other hosts'
// pieces. alltoallv: local alltoallv of the host's own pieces; every
// process's pieces for other hosts and its sizes reach its leader (local
// all-gathers), the leaders exchange them with Gloo's all-to-all, and
// each leader broadcasts what its host received. send and recv
// (hosts_p2p.cpp): between processes of one host in shared memory; between
// hosts through a second Gloo group, over every rank (`everyone`, made by
// the Python package too). split: none.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <atomic>
#include <chrono>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

#include "hosts_headers.hpp"
#include "shm_transport.hpp"
#include "xal/xal_transport.h"

namespace xal::torch_backend {

class HostsTransport {
 public:
  // host_of_rank[r]: the host (0..H-1, numbered by their lowest rank) of
  // every rank; `local` is this host's shared-memory transport (its ranks
  // in rank order); `leaders` is the backend over the H leaders (group rank
  // = host), set on leaders only; `everyone` a backend over every rank of
  // the group (group ranks), for send and recv between hosts (undefined:
  // those raise NOT_SUPPORTED).
  HostsTransport(std::unique_ptr<ShmTransport> local, std::vector<int> host_of_rank, int rank,
                 c10::intrusive_ptr<c10d::Backend> leaders,
                 c10::intrusive_ptr<c10d::Backend> everyone = {});
  ~HostsTransport();
  HostsTransport(const HostsTransport&) = delete;
  HostsTransport& operator=(const HostsTransport&) = delete;

  // The C table pointing back at this object; release deletes it.
  xal_comm_transport_t table();
  // The first rank (from `first` on, wrapping around) with a message
  // offered to this process (in shared memory, or a header from another
  // host), or -1. Any thread.
  int offered_from(int first) const;

 private:
  bool leader() const { return leaders_.defined(); }
  int local_index(int rank) const;
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
  static void abort(void* user);
  static void release(void* user);
  // A message to or from a process of another host, through `everyone`:
  // its header (size and tag: hosts_headers.hpp), then its bytes under
  // its own Gloo tag.
  xal_status_t send_remote(const void* buf, size_t bytes, uint32_t peer, uint64_t tag,
                           uint32_t timeout_ms, char* message, size_t message_size);
  xal_status_t recv_remote(void* buf, size_t bytes, uint32_t peer, uint64_t tag,
                           uint32_t timeout_ms, char* message, size_t message_size);
  // The entry of send or recv (`what`): local(table, local index) for a
  // peer on this host, remote(*this) for one on another, after the checks.
  template <class Local, class Remote>
  static xal_status_t p2p_entry(void* user, const char* what, uint32_t peer, Local local,
                                Remote remote, char* message, size_t message_size);
  // Waits for a Gloo send or receive of `everyone`, which abort() ends.
  xal_status_t wait_remote(const char* what, uint32_t peer, c10::intrusive_ptr<c10d::Work> work,
                           uint32_t timeout_ms, char* message, size_t message_size);

  xal_comm_transport_t local_{};  // the host's ShmTransport (owned: released with this)
  const ShmTransport* shm_;       // the same, for offered_from
  const std::vector<int> host_of_;
  const int rank_, hosts_, host_;
  std::vector<int> local_ranks_;  // this host's ranks, in order
  c10::intrusive_ptr<c10d::Backend> leaders_;
  c10::intrusive_ptr<c10d::Backend> everyone_;
  std::unique_ptr<RemoteHeaders> headers_;  // with everyone_: the headers sent to this rank
  std::mutex pending_mu_;  // guards pending_
  std::list<c10::intrusive_ptr<c10d::Work>> pending_;  // Gloo sends and receives in flight
  std::vector<uint32_t> ranks_per_process_;
  std::atomic<bool> aborted_{false};
  std::atomic<xal_status_t> broken_{XAL_SUCCESS};  // the first failure between hosts
};

}  // namespace xal::torch_backend
