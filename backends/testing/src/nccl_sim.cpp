// nccl_sim.cpp -- a simulated NCCL (SIMULATION ONLY), over a simulated
// vendor runtime whose device memory is host memory: with the simulated
// CUDA driver it is the tests' libnccl.so.2 (XAL_CUDA_NCCL), with the
// simulated HIP runtime their librccl.so.1 (XAL_RCCL_LIBRARY), so that the
// plugins' NCCL and RCCL entries run without a GPU.
//
// Each call is enqueued on its stream as a host function (the runtime's
// cuLaunchHostFunc or hipLaunchHostFunc, launch_host_func()). The
// ranks' host functions for one launch meet; the last to arrive runs the
// whole launch, the others wait for it. A launch is one call, or what one
// thread put between ncclGroupStart and ncclGroupEnd for a communicator.
// Collectives are computed into scratch first (NCCL allows them in place);
// point-to-point transfers are copied straight into the receive buffers,
// rank after rank, as concurrent transfers are on a GPU: a receive buffer
// that overlaps a send buffer of the same group is corrupted here, as it
// may be there. XALSIM_NCCL_FAIL=<function> makes that function fail with
// ncclUnhandledCudaError.
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "nccl_sim_state.h"
#include "xalsupport/nccl_abi.h"

namespace {

using xalsim_nccl::Clique;
using xalsim_nccl::CommState;
using xalsim_nccl::consistent;
using xalsim_nccl::Kind;
using xalsim_nccl::Op;
using xalsim_nccl::run_round;


thread_local std::string t_last_error;
thread_local int t_group_depth = 0;
struct Pending {
  ncclComm_t comm;
  ncclStream_t stream;
  Op op;
};
thread_local std::vector<Pending> t_pending;

ncclResult_t fail(ncclResult_t r, std::string message) {
  t_last_error = std::move(message);
  return r;
}

bool injected(const char* name) {
  const char* v = std::getenv("XALSIM_NCCL_FAIL");
  return v != nullptr && std::strcmp(v, name) == 0;
}

// The simulation's ABI (nccl_sim_state.h) is the one the plugins use.
namespace abi = xal::support::nccl_abi;
static_assert(ncclInvalidUsage == abi::kInvalidUsage && ncclInProgress == abi::kInProgress &&
              ncclUnhandledCudaError == abi::kUnhandledCudaError);
static_assert(ncclInt8 == abi::kInt8 && ncclFloat16 == abi::kFloat16 &&
              ncclBfloat16 == abi::kBfloat16 && ncclFloat64 == abi::kFloat64);
static_assert(ncclSum == abi::kSum && ncclMax == abi::kMax && ncclMin == abi::kMin &&
              ncclAvg == abi::kAvg);

bool to_xal(ncclDataType_t t, xal_dtype_t* out) {
  return abi::from_nccl_dtype(static_cast<int>(t), out);
}

bool to_xal(ncclRedOp_t r, xal_op_t* out) {
  return abi::from_nccl_op(static_cast<int>(r), out);
}

// The state behind a handle (a heap std::shared_ptr<CommState>).
std::shared_ptr<CommState>& held(ncclComm_t comm) {
  return *reinterpret_cast<std::shared_ptr<CommState>*>(comm);
}

struct Launch {
  std::shared_ptr<CommState> comm;
  uint64_t number = 0;
  std::vector<Op> ops;
};

// The host function: meet the other ranks; the last runs the round.
void host_launch(void* user) {
  std::unique_ptr<Launch> launch(static_cast<Launch*>(user));
  Clique& clique = *launch->comm->clique;
  std::unique_lock<std::mutex> lock(clique.mutex);
  if (clique.aborted) return;
  Clique::Round& round = clique.rounds[launch->number];
  if (round.ops.empty()) {
    round.ops.resize(clique.size);
    round.comms.resize(clique.size);
  }
  round.ops[launch->comm->rank] = std::move(launch->ops);
  round.comms[launch->comm->rank] = launch->comm.get();
  if (++round.arrived == clique.size) {
    std::string why;
    if (consistent(round, &why)) {
      run_round(clique, round);
    } else {  // every rank's communicator reports it, as NCCL's would hang
      for (CommState* c : round.comms) c->async = ncclInvalidUsage;
      clique.why = why;
    }
    round.done = true;
    clique.cv.notify_all();
  } else {
    clique.cv.wait(lock, [&] { return round.done || clique.aborted; });
  }
  if (--round.arrived == 0) clique.rounds.erase(launch->number);
}

// Enqueues the pending operations of one thread, a launch per communicator.
ncclResult_t flush(std::vector<Pending> pending) {
  std::map<ncclComm_t, std::vector<Pending>> by_comm;
  std::vector<ncclComm_t> order;
  for (Pending& p : pending) {
    if (by_comm.count(p.comm) == 0) order.push_back(p.comm);
    by_comm[p.comm].push_back(p);
  }
  for (ncclComm_t c : order) {
    const std::vector<Pending>& ops = by_comm[c];
    auto launch = std::make_unique<Launch>();
    launch->comm = held(c);
    launch->number = launch->comm->launches++;
    for (const Pending& p : ops) launch->ops.push_back(p.op);
    if (!xalsim_nccl::launch_host_func(ops.front().stream, host_launch, launch.get())) {
      return fail(ncclUnhandledCudaError, "cuLaunchHostFunc failed on the stream");
    }
    launch.release();  // host_launch owns it
  }
  return ncclSuccess;
}

ncclResult_t enqueue(const char* name, ncclComm_t comm, ncclStream_t stream, Op op,
                     ncclDataType_t type, ncclRedOp_t red, bool with_op, bool has_root) {
  if (injected(name))
    return fail(ncclUnhandledCudaError, std::string("injected failure of ") + name);
  if (comm == nullptr) return fail(ncclInvalidArgument, std::string(name) + ": comm is NULL");
  const CommState& c = *held(comm);
  if (!to_xal(type, &op.dtype)) {
    return fail(ncclInvalidArgument,
                std::string(name) + ": invalid datatype " + std::to_string(type));
  }
  if (with_op && !to_xal(red, &op.op)) {
    return fail(ncclInvalidArgument,
                std::string(name) + ": invalid reduction op " + std::to_string(red));
  }
  if (has_root && (op.root < 0 || op.root >= c.clique->size)) {
    return fail(ncclInvalidArgument, std::string(name) + ": root/peer " + std::to_string(op.root) +
                                         " out of range for " + std::to_string(c.clique->size) +
                                         " ranks");
  }
  if (op.count > 0 && ((op.kind != Kind::kRecv && op.send == nullptr) ||
                       (op.kind != Kind::kSend && op.recv == nullptr))) {
    return fail(ncclInvalidArgument, std::string(name) + ": NULL buffer");
  }
  Pending p{comm, stream, op};
  if (t_group_depth > 0) {
    t_pending.push_back(p);
    return ncclSuccess;
  }
  return flush({p});
}

Op op_of(Kind kind, const void* send, void* recv, size_t count, int root) {
  return Op{kind,
            static_cast<const char*>(send),
            static_cast<char*>(recv),
            count,
            XAL_DTYPE_I8,
            XAL_OP_SUM,
            root};
}

constexpr bool kOp = true;    // the call has a reduction op
constexpr bool kRoot = true;  // the call has a root (or a peer)

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = 22703;  // 2.27.3
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (simulated)";
    case ncclSystemError: return "unhandled system error";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

// This thread's last error; else what the communicator's clique found
// wrong (ranks that disagree).
const char* ncclGetLastError(ncclComm_t comm) {
  if (!t_last_error.empty() || comm == nullptr) return t_last_error.c_str();
  Clique& clique = *held(comm)->clique;
  std::lock_guard<std::mutex> lock(clique.mutex);
  t_last_error = clique.why;
  return t_last_error.c_str();
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int n, const int* devices) {
  if (injected("ncclCommInitAll"))
    return fail(ncclUnhandledCudaError, "injected failure of ncclCommInitAll");
  if (comms == nullptr || n <= 0)
    return fail(ncclInvalidArgument, "ncclCommInitAll: no communicators");
  const int count = xalsim_nccl::device_count();
  if (count < 0) return fail(ncclUnhandledCudaError, "the runtime could not count its devices");
  for (int i = 0; i < n; ++i) {
    const int d = devices != nullptr ? devices[i] : i;
    if (d < 0 || d >= count)
      return fail(ncclInvalidArgument, "invalid device " + std::to_string(d));
    for (int j = 0; j < i; ++j) {
      if (devices != nullptr && devices[j] == d)
        return fail(ncclInvalidUsage, "duplicate GPU " + std::to_string(d));
    }
  }
  auto clique = std::make_shared<Clique>();
  clique->size = n;
  for (int i = 0; i < n; ++i) {
    auto s = std::make_shared<CommState>();
    s->clique = clique;
    s->rank = i;
    comms[i] = reinterpret_cast<ncclComm_t>(new std::shared_ptr<CommState>(std::move(s)));
  }
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return fail(ncclInvalidArgument, "ncclCommDestroy: comm is NULL");
  delete &held(comm);  // enqueued launches keep their own reference
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  const std::shared_ptr<Clique> clique = held(comm)->clique;
  {
    std::lock_guard<std::mutex> lock(clique->mutex);
    clique->aborted = true;
  }
  clique->cv.notify_all();
  delete &held(comm);
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* out) {
  if (comm == nullptr || out == nullptr)
    return fail(ncclInvalidArgument, "ncclCommGetAsyncError: NULL argument");
  const CommState& c = *held(comm);
  std::lock_guard<std::mutex> lock(c.clique->mutex);
  // Another rank aborted: NCCL's ranks see a peer gone.
  *out = c.async == ncclSuccess && c.clique->aborted ? ncclRemoteError : c.async;
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
  ++t_group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (t_group_depth == 0) return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--t_group_depth > 0) return ncclSuccess;
  return flush(std::exchange(t_pending, {}));
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, ncclComm_t comm, ncclStream_t stream) {
  return enqueue("ncclAllReduce", comm, stream, op_of(Kind::kAllReduce, send, recv, count, 0), type,
                 op, kOp, !kRoot);
}

ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type,
                           int root, ncclComm_t comm, ncclStream_t stream) {
  return enqueue("ncclBroadcast", comm, stream, op_of(Kind::kBroadcast, send, recv, count, root),
                 type, ncclSum, !kOp, kRoot);
}

ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                        ncclRedOp_t op, int root, ncclComm_t comm, ncclStream_t stream) {
  return enqueue("ncclReduce", comm, stream, op_of(Kind::kReduce, send, recv, count, root), type,
                 op, kOp, kRoot);
}

ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, ncclDataType_t type,
                           ncclComm_t comm, ncclStream_t stream) {
  return enqueue("ncclAllGather", comm, stream, op_of(Kind::kAllGather, send, recv, count, 0), type,
                 ncclSum, !kOp, !kRoot);
}

ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t count, ncclDataType_t type,
                               ncclRedOp_t op, ncclComm_t comm, ncclStream_t stream) {
  return enqueue("ncclReduceScatter", comm, stream,
                 op_of(Kind::kReduceScatter, send, recv, count, 0), type, op, kOp, !kRoot);
}

ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t comm, ncclStream_t stream) {
  return enqueue("ncclSend", comm, stream, op_of(Kind::kSend, send, nullptr, count, peer), type,
                 ncclSum, !kOp, kRoot);
}

ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      ncclStream_t stream) {
  return enqueue("ncclRecv", comm, stream, op_of(Kind::kRecv, nullptr, recv, count, peer), type,
                 ncclSum, !kOp, kRoot);
}

int xalsim_nccl_is_simulated() { return 1; }

}  // extern "C"
