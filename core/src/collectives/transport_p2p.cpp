#include "transport_p2p.hpp"

#include <algorithm>
#include <array>

#include "../error.hpp"
#include "../handles.hpp"
#include "p2p_direct.hpp"

namespace xal::core {

namespace {

uint64_t tag_of(const ProcessLayout& l, uint32_t from, uint32_t to, uint64_t seq) {
  return (seq * l.size + from) * l.size + to;
}

// The tags of one message's channels (p2p_direct.hpp): the message's own,
// and two more in a range no message's own tag reaches.
uint64_t channel_tag(uint64_t tag, DirectWire::Channel c) {
  return tag ^ (uint64_t{c} << 62);
}

// One message's transport calls with process `peer`, tag `tag`. The wire
// refers to `t`, which must outlive it; its calls may run on any thread
// (the transport's send and recv are thread-safe).
DirectWire wire_of(const xal_comm_transport_t& t, uint32_t peer, uint64_t tag) {
  DirectWire w;
  w.send = [&t, peer, tag](const void* buf, size_t bytes, DirectWire::Channel c,
                           uint32_t timeout_ms, std::string* why) {
    std::array<char, 512> m{};
    const xal_status_t s = t.send(t.user, buf, bytes, peer, channel_tag(tag, c), timeout_ms,
                                  m.data(), m.size());
    if (s != XAL_SUCCESS) *why = m.data();
    return s;
  };
  w.recv = [&t, peer, tag](void* buf, size_t bytes, DirectWire::Channel c, uint32_t timeout_ms,
                           std::string* why) {
    std::array<char, 512> m{};
    const xal_status_t s = t.recv(t.user, buf, bytes, peer, channel_tag(tag, c), timeout_ms,
                                  m.data(), m.size());
    if (s != XAL_SUCCESS) *why = m.data();
    return s;
  };
  return w;
}

}  // namespace

std::shared_ptr<P2pShared> make_transport_p2p(const xal_comm_transport_t& t,
                                              const ProcessLayout& layout, uint32_t timeout_ms) {
  auto shared = std::make_shared<P2pShared>(timeout_ms, nullptr);
  auto remote = std::make_shared<P2pRemote>();
  remote->is_local = [layout](uint32_t r) { return layout.process_of(r) == layout.me; };
  // Read once per communicator set; the mappings it opens are closed with
  // the set's last communicator.
  auto direct = std::make_shared<DirectPath>(DirectPath::enabled_by_env(), timeout_ms);
  // The table is copied: its functions and `user` stay valid until the
  // last communicator of the set (which waits for its queued work) goes.
  remote->send = [t, layout, direct](const P2pBuffer& b, uint32_t from, uint32_t to,
                                     uint64_t seq, std::string* why) {
    const uint32_t peer = layout.process_of(to);
    const uint64_t tag = tag_of(layout, from, to, seq);
    const DirectWire w = wire_of(t, peer, tag);
    const xal_status_t s =
        direct->applies(b.bytes)
            ? direct->send({b.device, b.ptr, b.view, b.bytes, peer, tag}, w, why)
            : w.send(b.view, b.bytes, DirectWire::kMessage, direct->timeout_ms(), why);
    if (s != XAL_SUCCESS)
      *why = cat("message #", seq + 1, " from rank ", from, " to rank ", to, ": ", *why);
    return s;
  };
  remote->recv = [t, layout, direct](const P2pBuffer& b, uint32_t from, uint32_t to,
                                     uint64_t seq, std::string* why) {
    const uint32_t peer = layout.process_of(from);
    const uint64_t tag = tag_of(layout, from, to, seq);
    const DirectWire w = wire_of(t, peer, tag);
    const DirectEnd e{b.device, b.ptr, b.view, b.bytes, peer, tag};
    const xal_status_t s =
        direct->applies(b.bytes) ? direct->recv(e, w, why)
        : direct->enabled()      ? direct->recv_small(e, w, why)
                                 : w.recv(b.view, b.bytes, DirectWire::kMessage,
                                          direct->timeout_ms(), why);
    if (s != XAL_SUCCESS)
      *why = cat("message #", seq + 1, " from rank ", from, " to rank ", to, ": ", *why);
    return s;
  };
  shared->remote = std::move(remote);
  return shared;
}

std::shared_ptr<SplitMeet> make_transport_split(const xal_comm_transport_t& t,
                                                std::span<DeviceObj* const> devices,
                                                uint32_t timeout_ms) {
  std::vector<DeviceObj*> devs(devices.begin(), devices.end());
  auto maker = [t, devs](const std::vector<SplitArgs>& args, std::vector<xal_comm_t>& child,
                         std::string* why) -> xal_status_t {
    if (!t.split) {
      *why = "the transport has no split (built against a header before ABI 1.1)";
      return XAL_ERROR_NOT_SUPPORTED;
    }
    const int32_t color = args[0].color;
    bool mixed = false;
    int32_t key = args[0].key;
    for (const SplitArgs& a : args) {
      mixed = mixed || (a.color < 0) != (color < 0) || (color >= 0 && a.color != color);
      key = std::min(key, a.key);
    }
    xal_comm_transport_t c{};
    std::array<char, 512> m{};
    const xal_status_t s =
        t.split(t.user, mixed ? XAL_COMM_SPLIT_NOCOLOR : color, key, &c, m.data(), m.size());
    if (s != XAL_SUCCESS) {
      *why = cat("the transport's split failed: ", m.data());
      return s;
    }
    if (mixed) {
      if (c.release) c.release(c.user);
      std::string colors;
      for (size_t i = 0; i < args.size(); ++i)
        colors += cat(i ? ", " : "", "rank ", args[i].rank, ": ", args[i].color);
      *why = cat("the local ranks of one process chose different colors (", colors,
                 "); across processes every rank of a process must choose the same color");
      return XAL_ERROR_NOT_SUPPORTED;
    }
    if (color < 0) return XAL_SUCCESS;
    const std::vector<uint32_t> order = split_members(args, color);
    std::vector<xal_device_t> handles;
    for (uint32_t i : order) handles.push_back(to_handle<xal_device_t>(devs[i]));
    xal_comm_options_t o{};
    o.struct_size = sizeof o;
    o.timeout_ms = args[0].timeout_ms;
    std::vector<xal_comm_t> made(order.size(), nullptr);
    const xal_status_t cs = xal_comm_create_transport(
        handles.data(), static_cast<uint32_t>(handles.size()), &o, &c, made.data());
    if (cs != XAL_SUCCESS) {
      xal_error_info_t e{};
      e.struct_size = sizeof e;
      xal_last_error(&e);
      if (c.release) c.release(c.user);
      *why = cat("the child communicator could not be made: ", e.message);
      return cs;
    }
    for (size_t k = 0; k < order.size(); ++k) child[order[k]] = made[k];
    return XAL_SUCCESS;
  };
  return std::make_shared<SplitMeet>(std::move(devs), timeout_ms, std::move(maker));
}

}  // namespace xal::core
