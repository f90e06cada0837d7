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
// Collectives are computed into scratch first (NCCL allows them in place).
// Sends and receives meet their partners only (nccl_sim_p2p.cpp): the k-th
// send of rank a to rank b pairs with the k-th receive of b from a; a pair
// that disagrees on count or dtype moves nothing and is each rank's
// asynchronous error (ncclInvalidUsage, the reason in ncclGetLastError),
// as is a message whose partner does not come within
// XALSIM_NCCL_P2P_TIMEOUT_MS (10 s) rather than NCCL's hang; a group that
// holds both ranks of a pair must pair their messages by ncclGroupEnd,
// which otherwise fails with ncclInvalidUsage and launches nothing.
// XALSIM_NCCL_FAIL=<function> makes that function fail with
// ncclUnhandledCudaError; xalsim_nccl_call_count(name) counts the calls of
// each function that queues work.
//
// Abort: by default ncclCommAbort of one rank wakes every rank of its
// clique. XALSIM_NCCL_ABORT=rank aborts that rank only, as the real NCCL
// does (each rank's communicator must be aborted; a rank whose peer was
// aborted waits for it as on a GPU).
//
// Misuse is detected, as the real NCCL would crash or corrupt: a call
// with a communicator that ncclCommAbort or ncclCommDestroy freed, and a
// communicator freed while another thread's call still uses it (each call
// holds it until it returns; XALSIM_NCCL_HOLD_MS=<ms> makes the calls
// that take a communicator, but abort and destroy, hold it that long
// before returning, so that a test can free it meanwhile). Such a call
// fails with ncclInvalidUsage, a line on stderr, and counts in
// xalsim_nccl_misuses(); xalsim_nccl_calls_in_flight() counts the calls
// using a communicator now.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
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

// XALSIM_NCCL_ABORT=rank: ncclCommAbort aborts its own rank only.
bool abort_one_rank() {
  const char* v = std::getenv("XALSIM_NCCL_ABORT");
  return v != nullptr && std::strcmp(v, "rank") == 0;
}

// The live communicators (handles not yet freed by ncclCommAbort or
// ncclCommDestroy), the calls using one now, and the misuses seen.
struct Registry {
  std::mutex mutex;
  std::set<ncclComm_t> live;
  int in_flight = 0;
  int misuses = 0;
  std::map<std::string, int> calls;  // of each function that queues work
};

Registry& registry() {
  static Registry* instance = new Registry();  // never destroyed: host functions may run
  return *instance;
}

ncclResult_t misuse(std::string message) {
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    ++reg.misuses;
  }
  std::fprintf(stderr, "xalsim nccl: misuse: %s\n", message.c_str());
  return fail(ncclInvalidUsage, std::move(message));
}

bool is_live(ncclComm_t comm) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  return reg.live.count(comm) != 0;
}

// One call's use of a communicator, from its start to its end(): the
// communicator must be live at both (another thread may not free it
// meanwhile). Not copyable.
class Use {
 public:
  Use(const char* name, ncclComm_t comm) : name_(name), comm_(comm) {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    live_ = reg.live.count(comm) != 0;
    if (live_) ++reg.in_flight;
  }
  ~Use() {
    if (live_) end(ncclSuccess);
  }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;

  // ncclSuccess, or the misuse of a handle that was freed already.
  ncclResult_t start() const {
    if (live_) return ncclSuccess;
    return misuse(std::string(name_) + ": the communicator was freed (ncclCommAbort or "
                                       "ncclCommDestroy) before this call");
  }
  // Returns `r`, or the misuse of a handle freed while the call used it.
  ncclResult_t end(ncclResult_t r) {
    if (!live_) return r;
    live_ = false;
    if (const char* hold = std::getenv("XALSIM_NCCL_HOLD_MS"); hold != nullptr) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atol(hold)));
    }
    bool freed = false;
    {
      Registry& reg = registry();
      std::lock_guard<std::mutex> lock(reg.mutex);
      --reg.in_flight;
      freed = reg.live.count(comm_) == 0;
    }
    if (!freed) return r;
    return misuse(std::string(name_) + ": the communicator was freed (ncclCommAbort or "
                                       "ncclCommDestroy) by another thread while this call used it");
  }

 private:
  const char* name_;
  ncclComm_t comm_;
  bool live_ = false;
};

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
  bool collective = false;  // holds a collective: meets every rank
  uint64_t number = 0;      // of the launches with collectives
  std::vector<Op> ops;
};

// XALSIM_NCCL_P2P_TIMEOUT_MS: how long a send or receive waits for its
// partner before it fails (10 s by default).
int p2p_timeout_ms() {
  const char* v = std::getenv("XALSIM_NCCL_P2P_TIMEOUT_MS");
  const long ms = v != nullptr ? std::atol(v) : 0;
  return ms > 0 ? static_cast<int>(ms) : 10000;
}

// The host function: the collectives meet every rank's (the last to come
// runs the round); the sends and receives meet their partners only.
void host_launch(void* user) {
  std::unique_ptr<Launch> launch(static_cast<Launch*>(user));
  Clique& clique = *launch->comm->clique;
  CommState& self = *launch->comm;
  std::unique_lock<std::mutex> lock(clique.mutex);
  if (clique.aborted || self.aborted) return;
  if (launch->collective) {
    Clique::Round& round = clique.rounds[launch->number];
    if (round.ops.empty()) {
      round.ops.resize(clique.size);
      round.comms.resize(clique.size);
    }
    round.ops[launch->comm->rank] = launch->ops;
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
      // Only this rank's abort wakes it (XALSIM_NCCL_ABORT=rank), or any
      // rank's (the default).
      clique.cv.wait(lock, [&] { return round.done || clique.aborted || self.aborted; });
    }
    if (--round.arrived == 0) clique.rounds.erase(launch->number);
    if (clique.aborted || self.aborted) return;
  }
  xalsim_nccl::run_messages(clique, self, launch->ops, lock, p2p_timeout_ms());
}

// Numbers the sends and receives of `ops` (one thread's, in issue order)
// per pair of ranks. When a group (`group_end`) holds both ranks of a
// pair, the pair's sends and receives posted so far must match by its
// end: otherwise nothing is numbered and the mismatch is returned (a send
// without its receive would hang NCCL's group).
ncclResult_t number_messages(std::vector<Pending>& ops, bool group_end) {
  struct Counts {
    std::map<int, uint64_t> sent, received;
  };
  std::map<CommState*, Counts> next;  // from the communicators' own counts
  for (Pending& p : ops) {
    if (!xalsim_nccl::is_p2p(p.op)) continue;
    CommState* c = held(p.comm).get();
    std::lock_guard<std::mutex> lock(c->clique->mutex);
    auto [it, fresh] = next.try_emplace(c);
    if (fresh) it->second = Counts{c->sent, c->received};
    auto& counts = p.op.kind == Kind::kSend ? it->second.sent : it->second.received;
    p.op.seq = counts[p.op.root]++;
  }
  auto count = [](const std::map<int, uint64_t>& counts, int peer) -> uint64_t {
    const auto it = counts.find(peer);
    return it == counts.end() ? 0 : it->second;
  };
  for (const auto& [a, from] : next) {
    for (const auto& [b, to] : next) {
      if (!group_end || a->clique != b->clique) continue;
      const uint64_t sent = count(from.sent, b->rank);
      const uint64_t received = count(to.received, a->rank);
      if (sent == received) continue;
      return fail(ncclInvalidUsage,
                  "ncclGroupEnd: rank " + std::to_string(a->rank) + " posted " +
                      std::to_string(sent) + " ncclSend to rank " + std::to_string(b->rank) +
                      ", which posted " + std::to_string(received) +
                      " ncclRecv from it: a message without its partner would hang the group");
    }
  }
  for (auto& [c, counts] : next) {
    std::lock_guard<std::mutex> lock(c->clique->mutex);
    c->sent = std::move(counts.sent);
    c->received = std::move(counts.received);
  }
  return ncclSuccess;
}

// Enqueues the pending operations of one thread (its group, at
// `group_end`, or one call), a launch per communicator.
ncclResult_t flush(std::vector<Pending> pending, bool group_end) {
  std::map<ncclComm_t, std::vector<Pending>> by_comm;
  std::vector<ncclComm_t> order;
  for (Pending& p : pending) {
    if (by_comm.count(p.comm) == 0) order.push_back(p.comm);
    by_comm[p.comm].push_back(p);
  }
  for (ncclComm_t c : order) {
    if (!is_live(c)) {
      return misuse("ncclGroupEnd: a communicator of the group was freed (ncclCommAbort or "
                    "ncclCommDestroy) before the group ended");
    }
  }
  if (const ncclResult_t r = number_messages(pending, group_end); r != ncclSuccess) return r;
  by_comm.clear();
  for (Pending& p : pending) by_comm[p.comm].push_back(p);
  for (ncclComm_t c : order) {
    const std::vector<Pending>& ops = by_comm[c];
    auto launch = std::make_unique<Launch>();
    launch->comm = held(c);
    for (const Pending& p : ops) {
      launch->ops.push_back(p.op);
      launch->collective = launch->collective || !xalsim_nccl::is_p2p(p.op);
    }
    if (launch->collective) launch->number = launch->comm->launches++;
    if (!xalsim_nccl::launch_host_func(ops.front().stream, host_launch, launch.get())) {
      return fail(ncclUnhandledCudaError, "cuLaunchHostFunc failed on the stream");
    }
    launch.release();  // host_launch owns it
  }
  return ncclSuccess;
}

// A call of `name` on a communicator the caller holds (enqueue): checked,
// then queued, or kept for the thread's group.
ncclResult_t enqueue_live(const char* name, ncclComm_t comm, ncclStream_t stream, Op op,
                          ncclDataType_t type, ncclRedOp_t red, bool with_op, bool has_root) {
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
  return flush({p}, /*group_end=*/false);
}

// A call of `name`: the communicator used (Use) while it is enqueued.
ncclResult_t enqueue(const char* name, ncclComm_t comm, ncclStream_t stream, Op op,
                     ncclDataType_t type, ncclRedOp_t red, bool with_op, bool has_root) {
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    ++reg.calls[name];
  }
  if (injected(name))
    return fail(ncclUnhandledCudaError, std::string("injected failure of ") + name);
  if (comm == nullptr) return fail(ncclInvalidArgument, std::string(name) + ": comm is NULL");
  Use use(name, comm);
  if (const ncclResult_t r = use.start(); r != ncclSuccess) return r;
  return use.end(enqueue_live(name, comm, stream, op, type, red, with_op, has_root));
}

Op op_of(Kind kind, const void* send, void* recv, size_t count, int root) {
  return Op{kind,
            static_cast<const char*>(send),
            static_cast<char*>(recv),
            count,
            XAL_DTYPE_I8,
            XAL_OP_SUM,
            root,
            0};
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
  Use use("ncclGetLastError", comm);
  if (use.start() != ncclSuccess) return t_last_error.c_str();
  std::string why;
  {
    Clique& clique = *held(comm)->clique;
    std::lock_guard<std::mutex> lock(clique.mutex);
    why = clique.why;
  }
  if (use.end(ncclSuccess) != ncclSuccess) return t_last_error.c_str();
  t_last_error = std::move(why);
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
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.live.insert(comms, comms + n);
  return ncclSuccess;
}

// Frees the handle; false (a misuse) when it was freed already.
bool forget(ncclComm_t comm) {
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    if (reg.live.erase(comm) == 0) return false;
  }
  delete &held(comm);  // enqueued launches keep their own reference
  return true;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return fail(ncclInvalidArgument, "ncclCommDestroy: comm is NULL");
  if (!is_live(comm)) return misuse("ncclCommDestroy: the communicator was freed already");
  forget(comm);
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  if (!is_live(comm)) return misuse("ncclCommAbort: the communicator was freed already");
  CommState& state = *held(comm);
  const std::shared_ptr<Clique> clique = state.clique;
  {
    std::lock_guard<std::mutex> lock(clique->mutex);
    if (abort_one_rank()) {
      state.aborted = true;  // as the real NCCL: this rank only
    } else {
      clique->aborted = true;
    }
  }
  clique->cv.notify_all();
  if (!forget(comm)) return misuse("ncclCommAbort: the communicator was freed meanwhile");
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* out) {
  if (comm == nullptr || out == nullptr)
    return fail(ncclInvalidArgument, "ncclCommGetAsyncError: NULL argument");
  Use use("ncclCommGetAsyncError", comm);
  if (const ncclResult_t r = use.start(); r != ncclSuccess) return r;
  {
    const CommState& c = *held(comm);
    std::lock_guard<std::mutex> lock(c.clique->mutex);
    // Another rank aborted: NCCL's ranks see a peer gone (with
    // XALSIM_NCCL_ABORT=rank they see nothing: they would wait for it).
    *out = c.async == ncclSuccess && c.clique->aborted ? ncclRemoteError : c.async;
  }
  return use.end(ncclSuccess);
}

ncclResult_t ncclGroupStart() {
  ++t_group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (t_group_depth == 0) return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--t_group_depth > 0) return ncclSuccess;
  return flush(std::exchange(t_pending, {}), /*group_end=*/true);
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

// The calls using a communicator now, and the misuses seen so far (see the
// top of this file). For tests.
int xalsim_nccl_calls_in_flight() {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  return reg.in_flight;
}

int xalsim_nccl_misuses() {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  return reg.misuses;
}

// How often the function `name` that queues work (ncclAllReduce, ...,
// ncclSend, ncclRecv) was called so far, failed calls included. For tests.
int xalsim_nccl_call_count(const char* name) {
  if (name == nullptr) return 0;
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  const auto it = reg.calls.find(name);
  return it == reg.calls.end() ? 0 : it->second;
}

}  // extern "C"
