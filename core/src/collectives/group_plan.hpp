// How a mixed communicator is split for the hierarchical path: ranks are
// grouped by backend; a group whose backend has native collectives and more
// than one device gets a native sub-communicator and one slot in the
// leaders' exchange (its lowest rank, the leader, takes part); every other
// rank has a slot of its own.
// Plain data, built once by create_hierarchical_comms; read-only after.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "../runtime.hpp"

namespace xal::core {

struct GroupPlan {
  struct Group {
    Backend* backend = nullptr;
    std::vector<uint32_t> ranks;  // ascending; ranks[0] is the leader
    bool native = false;          // has a native sub-communicator
  };
  std::vector<Group> groups;
  std::vector<uint32_t> group_of;  // rank -> index in groups
  std::vector<uint32_t> local_of;  // rank -> position in its group
  std::vector<uint32_t> slot_of;   // rank -> slot in the leaders' exchange
  std::vector<uint32_t> slot_rank; // slot -> the rank that takes part
  uint32_t slots() const { return static_cast<uint32_t>(slot_rank.size()); }
  // True when some group runs natively (otherwise the plan is flat).
  bool hierarchical() const { return slots() < group_of.size(); }
  // "slot 0 = rank 0, slot 1 = rank 3, ..." for error messages.
  std::string describe_slots() const;
};

// True when `table` offers the native collectives the hierarchical path uses
// for a group (comm_create, broadcast, and reduce or allreduce). Thread-safe.
bool backend_has_native_collectives(const xal_backend_table_t* table);

// The plan for `devices` in rank order; backends in `no_native` get no
// native group. Reads the devices only; thread-safe.
GroupPlan make_group_plan(std::span<DeviceObj* const> devices,
                          const std::set<const Backend*>& no_native = {});

}  // namespace xal::core
