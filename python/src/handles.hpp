// The handles the bindings hand to Python. Each keeps the session generation
// it was made in (session.hpp). Devices are not owned (they live until
// xal_shutdown); allocations, streams, events and communicators are, and
// are released when closed or when Python drops them.
#pragma once

#include <string>

#include "session.hpp"

namespace xalpy {

struct Device {
  xal_device_t handle = nullptr;
  uint64_t gen = 0;
};

// The checks every owning handle shares: closed or stale objects raise.
class Owned {
 public:
  explicit Owned(uint64_t gen) : gen_(gen) {}
  uint64_t generation() const { return gen_; }
  bool closed() const { return closed_; }
  // Raises InvalidHandle when closed, NotInitialized/InvalidHandle when stale.
  void check(const char* operation) const;

 protected:
  uint64_t gen_;
  bool closed_ = false;
};

// Two objects of one session (raises for the stale one otherwise).
void same_session(const char* operation, uint64_t a, uint64_t b);

std::string hex(uint64_t v);

}  // namespace xalpy
