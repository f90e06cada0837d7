#include "comm_engine.h"

#include <chrono>

#include "copy_engine.h"
#include "device.h"
#include "errors.h"

namespace xal::mock {

namespace {

double slowest_throttle(const std::vector<Device*>& devices) {
  double gbps = 0.0;
  for (const Device* d : devices) {
    const double b = d->profile().bandwidth_gbps;
    if (b > 0 && (gbps == 0 || b < gbps)) gbps = b;
  }
  return gbps;
}

}  // namespace

Clique::Clique(std::vector<Device*> devices, uint32_t timeout_ms)
    : devices_(std::move(devices)),
      throttle_gbps_(slowest_throttle(devices_)),
      rendezvous_(static_cast<uint32_t>(devices_.size()), timeout_ms) {}

void Clique::run(uint32_t rank, const common::HostPart& part) {
  const auto start = std::chrono::steady_clock::now();
  try {
    rendezvous_.run(rank, part);
  } catch (const common::CollError& e) {
    throw Error(e.status(), e.what());
  }
  throttle(start, static_cast<size_t>(common::coll_bus_bytes(part.desc, size())),
           throttle_gbps_);
}

}  // namespace xal::mock
