// Communicators across processes over an xal_comm_transport_t
// (xal/xal_transport.h; libxal_mpi provides one over MPI).
//
// As in the hierarchical path, each rank's part of a call is a host function
// queued on its stream (in place when the device memory is host
// addressable, else staged through page-locked host memory). The local
// ranks meet (LocalMeet); the leader (local index 0) then runs the whole
// step (transport_step.hpp): it checks that every rank of every process
// asked for the same call, combines the local buffers, calls the transport
// for the step between processes and writes every local rank's output;
// then the local ranks meet again and return.
//
// Failures: a local rank or a process that does not arrive in time gives
// TIMEOUT, xal_comm_abort gives ABORTED, a failed transport call its
// status; these are sticky (the communicator is broken; later calls fail
// at once). Ranks that disagree give COLLECTIVE_MISMATCH for that call
// only, on every rank of every process. A call that fails on its stream
// fails that stream's next synchronize (note_stream_failure) and is the
// communicator's async error.
//
// A rank's calls keep their issue order across the streams of its device
// (issue_order.hpp): its staging buffers and its slot in the local meeting
// serve one call at a time.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "../comm.hpp"
#include "xal/xal_transport.h"

namespace xal::core {

// Fills `out` with one impl per local device (local index i has global rank
// first + i), or returns an error (detail set). The transport was checked by
// the caller. The impls release the transport only after adopt_transport.
xal_status_t create_transport_comms(std::span<DeviceObj* const> devices, uint32_t timeout_ms,
                                    const xal_comm_transport_t& transport,
                                    std::vector<std::unique_ptr<CommImpl>>& out);

// Hands the transport to impls made by create_transport_comms: its release
// runs when the last of them goes away.
void adopt_transport(CommImpl& any_of_them);

}  // namespace xal::core
