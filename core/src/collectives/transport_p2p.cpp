#include "transport_p2p.hpp"

#include <algorithm>
#include <array>

#include "../error.hpp"
#include "../handles.hpp"

namespace xal::core {

namespace {

uint64_t tag_of(const ProcessLayout& l, uint32_t from, uint32_t to, uint64_t seq) {
  return (seq * l.size + from) * l.size + to;
}

}  // namespace

std::shared_ptr<P2pShared> make_transport_p2p(const xal_comm_transport_t& t,
                                              const ProcessLayout& layout, uint32_t timeout_ms) {
  auto shared = std::make_shared<P2pShared>(timeout_ms, nullptr);
  auto remote = std::make_shared<P2pRemote>();
  remote->is_local = [layout](uint32_t r) { return layout.process_of(r) == layout.me; };
  // The table is copied: its functions and `user` stay valid until the
  // last communicator of the set (which waits for its queued work) goes.
  remote->send = [t, layout, timeout_ms](const void* buf, size_t bytes, uint32_t from,
                                         uint32_t to, uint64_t seq, std::string* why) {
    std::array<char, 512> m{};
    const xal_status_t s = t.send(t.user, buf, bytes, layout.process_of(to),
                                  tag_of(layout, from, to, seq), timeout_ms, m.data(), m.size());
    if (s != XAL_SUCCESS)
      *why = cat("message #", seq + 1, " from rank ", from, " to rank ", to, ": ", m.data());
    return s;
  };
  remote->recv = [t, layout, timeout_ms](void* buf, size_t bytes, uint32_t from, uint32_t to,
                                         uint64_t seq, std::string* why) {
    std::array<char, 512> m{};
    const xal_status_t s = t.recv(t.user, buf, bytes, layout.process_of(from),
                                  tag_of(layout, from, to, seq), timeout_ms, m.data(), m.size());
    if (s != XAL_SUCCESS)
      *why = cat("message #", seq + 1, " from rank ", from, " to rank ", to, ": ", m.data());
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
