// Point-to-point and split of communicators across processes, over the
// transport's send, recv and split entries (xal_transport.h, ABI 1.1).
//
// Messages: a message between ranks of this process meets in the
// process's Mailbox; one to or from another process is one transport send
// or recv, tagged (sequence * size + sender) * size + receiver with global
// ranks, so that the pair of ranks and the pair's sequence name it. From
// DirectPath::kMinBytes it takes the direct same-host path instead
// (p2p_direct.hpp): a descriptor on that tag, a reply and, when the
// receiver cannot map the sender's memory, the bytes, on two more tags of
// the message (XAL_P2P_DIRECT=0: off).
//
// Split: the local ranks meet first (SplitMeet); the last to arrive calls
// the transport's split once for the process, with the local ranks' color
// and their lowest key, and makes the local ranks' children over the child
// transport (xal_comm_create_transport), local ranks ordered by key, then
// parent rank. Processes are ordered by the transport (key, then process
// rank). Local ranks that choose different colors get NOT_SUPPORTED (the
// process still takes part in the transport's split, with no color, so
// that the others do not wait).
#pragma once

#include <memory>
#include <span>

#include "comm_split.hpp"
#include "p2p_rank.hpp"
#include "transport_step.hpp"
#include "xal/xal_transport.h"

namespace xal::core {

std::shared_ptr<P2pShared> make_transport_p2p(const xal_comm_transport_t& t,
                                              const ProcessLayout& layout, uint32_t timeout_ms);

std::shared_ptr<SplitMeet> make_transport_split(const xal_comm_transport_t& t,
                                                std::span<DeviceObj* const> devices,
                                                uint32_t timeout_ms);

}  // namespace xal::core
