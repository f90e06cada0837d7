// sim_nccl_state.h -- the simulated NCCL's communicators and the rounds
// in which their ranks meet (SIMULATION ONLY; see sim_nccl.cpp).
#pragma once

#include <nccl.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "xal/xal.h"

namespace xalsim_nccl {

enum class Kind { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kSend, kRecv };

struct Op {
  Kind kind;
  const char* send;  // kRecv: null
  char* recv;        // kSend: null
  size_t count;
  xal_dtype_t dtype;
  xal_op_t op;
  int root;  // broadcast/reduce root, or the peer of a send/recv
};

struct CommState;

// What the ranks of one ncclCommInitAll share.
struct Clique {
  int size = 0;
  std::mutex mutex;
  std::condition_variable cv;
  bool aborted = false;
  std::string why;  // of the last inconsistent round
  struct Round {
    int arrived = 0;
    bool done = false;
    std::vector<std::vector<Op>> ops;  // by rank
    std::vector<CommState*> comms;     // by rank
  };
  std::map<uint64_t, Round> rounds;  // by launch number
};

struct CommState {
  std::shared_ptr<Clique> clique;
  int rank = 0;
  uint64_t launches = 0;  // launches enqueued so far
  ncclResult_t async = ncclSuccess;
};

inline bool is_p2p(const Op& o) { return o.kind == Kind::kSend || o.kind == Kind::kRecv; }

// Whether the ranks' collectives in a round agree; otherwise why not.
bool consistent(const Clique::Round& round, std::string* why);

// Runs every rank's part of a round (the clique's mutex held): the
// collectives through scratch, then the sends and receives straight.
void run_round(Clique& clique, Clique::Round& round);

}  // namespace xalsim_nccl
