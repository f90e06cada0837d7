// The c10d Backend "xal": in the shape of ProcessGroupGloo, one worker
// thread per group runs the calls in issue order; each call hands the
// tensors' memory to xal (tensor_memory.hpp: imported in place where the
// device can, else staged), runs xal's collective over a communicator made
// with xal_comm_create_transport and the shared-memory transport
// (shm_transport.hpp) -- on the group's stream, or on torch's current
// stream imported into xal for tensors on the group's card -- and
// synchronises that stream. Its Work completes a Future (DDP communication
// hooks) with the output tensors or the error.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "shm_transport.hpp"
#include "tensor_memory.hpp"
#include "xal/xal.h"

namespace xal::torch_backend {

class XalWork : public c10d::Work {
 public:
  XalWork(c10d::OpType type, std::vector<at::Tensor> outputs, std::chrono::milliseconds timeout);
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  std::chrono::milliseconds getTimeout() const override { return timeout_; }
  // Completes the work (and its future) with success or `error`.
  void complete(std::exception_ptr error);
  // The rank a receive took its message from (-1 until it completes).
  int sourceRank() const override { return source_rank_.load(); }
  void setSourceRank(int rank) { source_rank_.store(rank); }

 private:
  std::atomic<int> source_rank_{-1};
  const std::vector<at::Tensor> outputs_;
  const std::chrono::milliseconds timeout_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

class XalBackend : public c10d::Backend {
 public:
  // Collective: every rank of the group calls it. Meets the others through
  // `store` (a group's prefix store); `timeout` bounds every collective.
  // host_of_rank: every rank's host (0..H-1, numbered by their lowest
  // rank; empty: one host); leaders: on each host's lowest rank when H > 1,
  // a backend over the H leaders (torch's Gloo) for the steps between hosts;
  // everyone: when H > 1, a backend over every rank (torch's Gloo) for
  // send and recv between hosts.
  XalBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
             std::chrono::milliseconds timeout, std::vector<int> host_of_rank = {},
             c10::intrusive_ptr<c10d::Backend> leaders = {},
             c10::intrusive_ptr<c10d::Backend> everyone = {});
  // A group split from another (backend_split.cpp): over `comm` (owned
  // from here on), `shm` its shared-memory transport.
  XalBackend(int rank, int size, std::chrono::milliseconds timeout, xal_device_t dev,
             xal_comm_t comm, ShmTransport* shm);
  ~XalBackend() override;

  const std::string getBackendName() const override { return "xal"; }
  std::string deviceDescription() const;
  int hosts() const { return hosts_; }
  // Calls the worker has run (done or failed).
  uint64_t callsRun() const { return calls_run_.load(); }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits,
                                               std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  // Point-to-point (backend_p2p.cpp). Messages of two ranks pair in the
  // order they are sent (as xal's and NCCL's); each carries its tag and
  // size, and a receive whose tag or size differs from its message's fails
  // naming both. Consecutive queued sends and receives, and those between
  // startCoalescing and endCoalescing (batch_isend_irecv), run together as
  // one xal group, so that a ring of them cannot deadlock.
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors,
                                               int tag) override;
  // Between startCoalescing and endCoalescing the calls are collected and
  // run as one item of the worker; endCoalescing's Work completes with all
  // of them. Called from the thread that issues the calls.
  bool supportsCoalescing() const override { return true; }
  void startCoalescing() override;
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;

  // Test hook: an allreduce (SUM) of `count` elements of `dtype` at `ptr`,
  // device memory of the group's card, on its native stream `native_stream`
  // -- the path of a CUDA tensor on the rank's card, entered without one
  // (no torch here has a GPU): the tensor is a view of the memory typed as
  // a CUDA tensor of the card's index.
  c10::intrusive_ptr<c10d::Work> allreduceDeviceMemory(uint64_t ptr, int64_t count,
                                                       at::ScalarType dtype,
                                                       uint64_t native_stream);
  // Allreduces run in place from shared tensors (shm_zero_copy.cpp).
  uint64_t zeroCopyAllreduces() const { return shm_ ? shm_->zero_copy_allreduces() : 0; }
  // Bytes the last call staged in device memory (worker thread's view).
  uint64_t lastStagedBytes() const { return last_staged_.load(); }

  // torch.distributed.split_group (backend_split.cpp): the group's
  // communicator split with xal_comm_split (color: the lowest of `ranks`,
  // key: this rank's place in them), collectively over this group; a rank
  // not in `ranks` takes part without a color and gets null. On one host
  // only (a group over several hosts makes subgroups with new_group).
  bool supportsSplitting() const override { return hosts_ == 1; }
  // The group's options (its timeout), which split_group copies.
  c10::intrusive_ptr<Options> getBackendOptions() override {
    return c10::make_intrusive<Options>("xal", timeout_);
  }
  c10::intrusive_ptr<c10d::Backend> split(const c10::intrusive_ptr<c10d::Store>& store,
                                          const std::vector<int>& ranks,
                                          const c10::intrusive_ptr<Options>& opts) override;

  // Unblocks pending calls (xal_comm_abort); later calls fail.
  void abort() override;
  // Finishes the queued calls and stops the worker.
  void shutdown() override;

 private:
  using Fn = std::function<void()>;
  // One message of a send or receive.
  struct P2pOp {
    enum class Kind { kSend, kRecv, kRecvAny } kind;
    int peer;  // -1: any (until found)
    int64_t tag;
    at::Tensor tensor;
  };
  struct Item {
    c10::intrusive_ptr<XalWork> work;
    Fn fn;                             // a collective (or a no-op when p2p is set)
    std::shared_ptr<P2pOp> p2p;        // a send or receive
    std::shared_ptr<std::vector<Item>> batch;  // endCoalescing's calls
    CallPlace place;                   // where its tensors live
  };
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, std::vector<at::Tensor> outputs,
                                         CallPlace place, Fn fn,
                                         std::shared_ptr<P2pOp> p2p = {});
  // The place of a call over `tensors` (checked: defined, dense layout).
  CallPlace place_for(const std::vector<at::Tensor>& tensors, const char* op) const;
  // The stream a call at `place` runs on (worker thread): the group's, or
  // torch's imported (cached per native stream).
  xal_stream_t stream_at(const CallPlace& place);
  // `t` as xal gets it in the current call, and memory for its tensors.
  at::Tensor dense(const at::Tensor& t) const { return dense_for(t, place_); }
  TensorMemory memory(const std::vector<const at::Tensor*>& inputs,
                      const std::vector<const at::Tensor*>& outputs, const char* name) {
    return TensorMemory(gdev_, call_stream_, place_, inputs, outputs, name);
  }
  void worker();
  void stop();
  // Creates the group's stream and starts the worker (constructors).
  void start();
  // xal_comm_split of the group's communicator, run by the worker in
  // order with the queued calls; the child (null without a color) and its
  // shared-memory transport.
  xal_comm_t split_comm(int32_t color, int32_t key, std::chrono::milliseconds timeout,
                        ShmTransport** out_shm);
  // Runs items in order (consecutive sends and receives as one xal group);
  // completes each item's work; returns the first error.
  std::exception_ptr run_items(std::vector<Item>& items);
  // Runs fn; on a lost device aborts the communicator. Returns its error.
  std::exception_ptr guarded(const Fn& fn);
  // Sends and receives of one xal group; one error (or null) per op.
  std::vector<std::exception_ptr> run_p2p(const std::vector<P2pOp*>& ops);
  // A receive from whichever rank has a message first (within the timeout).
  void run_recv_any(P2pOp& op, XalWork& work);
  c10::intrusive_ptr<c10d::Work> enqueue_p2p(P2pOp::Kind kind, std::vector<at::Tensor>& tensors,
                                             int peer, int tag, const char* name);

  // Steps run on the worker thread; each imports, calls xal, synchronises.
  void run_allreduce(at::Tensor& t, const c10d::ReduceOp& op, const char* name);
  void run_reduce(at::Tensor& t, const c10d::ReduceOp& op, int root);
  void run_broadcast(at::Tensor& t, int root);
  void run_allgather(at::Tensor& out, const at::Tensor& in, const char* name);
  void run_reduce_scatter(at::Tensor& out, const at::Tensor& in, const c10d::ReduceOp& op,
                          const char* name);
  // out (size * block bytes) <- block j of every rank's `in` (size blocks).
  void run_alltoall_bytes(at::Tensor& out, const at::Tensor& in, size_t block_bytes,
                          const char* name);
  // Largest value over the group (a small allreduce).
  int64_t group_max(int64_t v, const char* name);
  void sync(const char* name, xal_status_t issued);

  xal_device_t dev_ = nullptr;
  GroupDevice gdev_;
  xal_stream_t stream_ = nullptr;
  // The call the worker runs: its place and stream (worker thread only).
  CallPlace place_;
  xal_stream_t call_stream_ = nullptr;
  std::unordered_map<uint64_t, xal_stream_t> imported_streams_;  // worker thread only
  std::atomic<uint64_t> last_staged_{0};
  xal_comm_t comm_ = nullptr;
  ShmTransport* shm_ = nullptr;  // the communicator's transport on one host (owned by comm_)
  std::chrono::milliseconds timeout_;
  int hosts_ = 1;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool stop_ = false;
  bool coalescing_ = false;       // between startCoalescing and endCoalescing
  std::vector<Item> coalesced_;   // the calls collected meanwhile
  // The lowest group rank (from `first` on) with a message offered to
  // this rank in shared memory, or -1 (recvAnysource).
  std::function<int(int)> offered_from_;
  std::atomic<bool> aborted_{false};
  std::atomic<uint64_t> calls_run_{0};
  std::thread thread_;
};

}  // namespace xal::torch_backend
