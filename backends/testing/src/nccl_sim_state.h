// nccl_sim_state.h -- the simulated NCCL's ABI, communicators and the
// rounds in which their ranks meet (SIMULATION ONLY; see nccl_sim.cpp).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "xal/xal.h"

// NCCL's C ABI as NCCL documents it (RCCL's is the same), declared here
// so that the simulation needs neither NCCL's nor RCCL's headers.
extern "C" {
typedef struct ncclComm* ncclComm_t;
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7
} ncclResult_t;
typedef enum {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9
} ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;
typedef void* ncclStream_t;  // cudaStream_t or hipStream_t
}

namespace xalsim_nccl {

// What the vendor's simulated runtime gives the simulated NCCL, one file
// per vendor (sim_nccl_cuda.cpp, sim_rccl_hip.cpp): runs fn(user) in
// `stream`'s order on a thread of the stream (host functions of different
// streams must be able to run at once); and the number of devices.
bool launch_host_func(ncclStream_t stream, void (*fn)(void*), void* user);
int device_count();

enum class Kind { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kSend, kRecv };

struct Op {
  Kind kind;
  const char* send;  // kRecv: null
  char* recv;        // kSend: null
  size_t count;
  xal_dtype_t dtype;
  xal_op_t op;
  int root;  // broadcast/reduce root, or the peer of a send/recv
  uint64_t seq;  // a send's or receive's number within its pair of ranks
};

struct CommState;

// One message: the k-th send of rank `from` to rank `to` and the k-th
// receive of `to` from `from` (NCCL's pairing), posted by their launches'
// host functions; the second to come copies it (or finds a mismatch).
using MessageKey = std::tuple<int, int, uint64_t>;  // from, to, k
struct Message {
  const Op* send = nullptr;  // owned by the posting launch, while it waits
  const Op* recv = nullptr;
  CommState* sender = nullptr;
  CommState* receiver = nullptr;
  bool done = false;  // copied, or failed (the communicators' async error)
  int posted = 0;     // launches still holding it
};

// What the ranks of one ncclCommInitAll share.
struct Clique {
  int size = 0;
  std::mutex mutex;
  std::condition_variable cv;
  bool aborted = false;  // by ncclCommAbort of any rank (the default mode)
  std::string why;  // of the last inconsistent round
  struct Round {
    int arrived = 0;
    bool done = false;
    std::vector<std::vector<Op>> ops;  // by rank
    std::vector<CommState*> comms;     // by rank
  };
  std::map<uint64_t, Round> rounds;  // by launch number (with collectives)
  std::map<MessageKey, Message> messages;  // posted, not yet left by both
};

struct CommState {
  std::shared_ptr<Clique> clique;
  int rank = 0;
  uint64_t launches = 0;  // launches with collectives enqueued so far
  // Sends to and receives from each peer enqueued so far (guarded by the
  // clique's mutex): the sequence numbers of the next ones.
  std::map<int, uint64_t> sent, received;
  ncclResult_t async = ncclSuccess;
  // XALSIM_NCCL_ABORT=rank: ncclCommAbort aborted this rank only (guarded
  // by the clique's mutex).
  bool aborted = false;
};

inline bool is_p2p(const Op& o) { return o.kind == Kind::kSend || o.kind == Kind::kRecv; }

// Whether the ranks' collectives in a round agree; otherwise why not.
bool consistent(const Clique::Round& round, std::string* why);

// Runs every rank's collectives of a round (the clique's mutex held),
// through scratch.
void run_round(Clique& clique, Clique::Round& round);

// A rank's sends and receives of one launch (`ops`, which outlive the
// call), on its host function, the clique's mutex held by `lock`: posts
// every one, copies those whose partner was posted already, then waits
// until each was copied by its partner, the clique (or rank) is aborted,
// or `timeout_ms` passes. A send and receive that disagree on count or
// dtype, and a message whose partner never came, move nothing and set
// both (or the waiting) rank's asynchronous error to ncclInvalidUsage,
// with the reason in clique.why.
void run_messages(Clique& clique, CommState& self, const std::vector<Op>& ops,
                  std::unique_lock<std::mutex>& lock, int timeout_ms);

}  // namespace xalsim_nccl
