// The core's collective path, for communicators whose devices span
// backends, or whose backend has no native collectives.
//
// Every rank meets the others at a shared-memory rendezvous in the core
// (xal_common/host_collective.hpp) from a host function queued on its
// stream, so the collective stays ordered on the stream and asynchronous to
// the caller. A rank whose device memory is host addressable (the mock) is
// read and written in place; any other rank is staged: its input is copied
// to a page-locked host buffer before the host function and its output
// copied back after it, both queued on the same stream. The ranks' host
// functions each reduce 1/n of the data, in parallel.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "../comm.hpp"

namespace xal::core {

// Fills `out` with one impl per device, or returns an error (detail set).
xal_status_t create_hierarchical_comms(std::span<DeviceObj* const> devices,
                                       uint32_t timeout_ms,
                                       std::vector<std::unique_ptr<CommImpl>>& out);

}  // namespace xal::core
