// The core's collective path, for communicators whose devices span
// backends, or whose backend has no native collectives.
//
// Ranks are grouped by backend (group_plan.hpp). A group whose backend has
// native collectives and more than one device runs them on a native
// sub-communicator; its leader (lowest rank) alone meets the other groups
// at a shared-memory rendezvous in the core. Allreduce: native reduce to
// the leader, leaders' allreduce through host memory, native broadcast from
// the leader. Broadcast: native broadcast inside the root's group, leaders'
// broadcast, native broadcast inside the other groups. Reduce (when every
// native group's backend has reduce): native reduce inside each group,
// leaders' reduce to the root's slot. Avg (allreduce, reduce): a native sum
// inside each group, the leaders' exchange dividing by the communicator's
// rank count. The layout collectives (allgather, reduce_scatter, alltoall)
// meet every rank at one rendezvous, as does every collective when no
// group runs natively.
//
// Host steps are queued on the rank's stream as host functions, so every
// collective stays ordered on the stream and asynchronous to the caller.
// Host-addressable memory (the mock's) is used in place; other memory is
// staged in chunks, pipelined (pipeline.hpp). A rank's calls keep their
// issue order across the streams of its device (issue_order.hpp). A
// failure of the leaders' exchange reaches every member of a native group:
// the members that did not take part wait for its outcome on their streams
// (group_outcome.hpp).
#pragma once

#include <memory>
#include <set>
#include <span>
#include <vector>

#include "../comm.hpp"

namespace xal::core {

// Fills `out` with one impl per device, or returns an error (detail set).
// Backends in `no_native` get no native group; a backend whose library
// fails to make its group (native_failure_can_fall_back) joins them, with a
// warning, and its ranks take part one by one.
xal_status_t create_hierarchical_comms(std::span<DeviceObj* const> devices,
                                       uint32_t timeout_ms,
                                       std::vector<std::unique_ptr<CommImpl>>& out,
                                       std::set<const Backend*> no_native = {});

}  // namespace xal::core
