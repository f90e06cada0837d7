// The leader's step of a collective across processes (transport_comm.hpp):
// host memory only, no locks. Not thread-safe: one leader per call.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "transport_host.hpp"
#include "xal/xal_transport.h"
#include "xal_common/host_collective.hpp"

namespace xal::core {

// What a communicator knows of its processes.
struct ProcessLayout {
  uint32_t me = 0;                 // this process
  std::vector<uint32_t> ranks;     // ranks of each process
  std::vector<uint32_t> first;     // global rank of each process's local 0
  uint32_t size = 0;               // global ranks
  uint32_t local() const { return ranks[me]; }
  uint32_t base() const { return first[me]; }
  uint32_t process_of(uint32_t rank) const;
};

// The result of a step: a status and, on failure, why.
struct StepResult {
  xal_status_t status = XAL_SUCCESS;
  std::string message;  // without the collective's name
  bool sticky = false;  // the transport failed: the communicator is broken
};

// Runs one call for every local rank: parts[i] is local rank i's part
// (host views of its buffers). Writes every local output. Reduce and
// reduce_scatter use the transport's own entries when it has them (else an
// allreduce); the local reductions and copies run on several cores.
// `scratch` is the leader's reusable host memory.
StepResult run_transport_step(const xal_comm_transport_t& t, const ProcessLayout& layout,
                              uint32_t timeout_ms, std::span<const common::HostPart> parts,
                              Scratch& scratch);

}  // namespace xal::core
