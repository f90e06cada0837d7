// Native collectives of the mock backend: the simulated devices of one
// instance share one process, so their memory is host addressable and the
// ranks meet at a shared-memory Rendezvous (xal_common/host_collective.hpp).
//
// Each rank's call is queued on its stream like a copy. When the stream's
// worker reaches it, the worker joins the rendezvous, does 1/n of the work
// over every rank's buffers, and leaves when every share is done; the ranks'
// workers thus run each collective in parallel. A profile's bandwidth_gbps
// throttles a collective to the slowest card's bandwidth (nccl-tests' bus
// bytes), so that mixed sets behave like mixed hardware.
// Thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "xal_common/host_collective.hpp"

namespace xal::mock {

class Device;

class Clique {
 public:
  Clique(std::vector<Device*> devices, uint32_t timeout_ms);

  uint32_t size() const { return rendezvous_.size(); }
  Device& device(uint32_t rank) const { return *devices_[rank]; }
  common::Rendezvous& rendezvous() { return rendezvous_; }

  // Runs rank's part on its stream worker; throws Error with the status.
  void run(uint32_t rank, const common::HostPart& part);

 private:
  const std::vector<Device*> devices_;
  const double throttle_gbps_;  // slowest card's throttle, 0: none
  common::Rendezvous rendezvous_;
};

// One rank: what comm_create returns as xal_bcomm_t.
struct Comm {
  std::shared_ptr<Clique> clique;
  uint32_t rank = 0;
};

}  // namespace xal::mock
