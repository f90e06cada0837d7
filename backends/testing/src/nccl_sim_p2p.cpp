// nccl_sim_p2p.cpp -- the simulated NCCL's sends and receives (SIMULATION
// ONLY): each message is met by the host functions of its two ranks only,
// as NCCL's point-to-point involves no other rank. Every launch posts all
// of its messages before it waits for any, so the messages of one group
// never wait for each other (NCCL's grouped semantics). The second of a
// pair to come copies the bytes straight from the send buffer into the
// receive buffer, as a transfer on a GPU would (a receive buffer that
// overlaps a send buffer of its group is corrupted, as it may be there).
#include <chrono>
#include <cstring>

#include "nccl_sim_state.h"
#include "xal_common/reduce.hpp"

namespace xalsim_nccl {
namespace {

std::string describe(const Op& o) {
  return std::to_string(o.count) + " x " + xal::common::dtype_name(o.dtype);
}

// The message's two halves are posted: copy it, or report the mismatch on
// both ranks (clique's mutex held).
void complete(Clique& clique, const MessageKey& key, Message& m) {
  const Op& s = *m.send;
  const Op& r = *m.recv;
  if (s.count != r.count || s.dtype != r.dtype) {
    m.sender->async = ncclInvalidUsage;
    m.receiver->async = ncclInvalidUsage;
    clique.why = "ncclSend of rank " + std::to_string(std::get<0>(key)) + " to rank " +
                 std::to_string(std::get<1>(key)) + " (message " +
                 std::to_string(std::get<2>(key)) + ") has " + describe(s) +
                 ", the matching ncclRecv " + describe(r) + ": nothing was moved";
  } else if (s.count > 0) {
    std::memcpy(r.recv, s.send, s.count * xal::common::dtype_size(s.dtype));
  }
  m.done = true;
}

}  // namespace

void run_messages(Clique& clique, CommState& self, const std::vector<Op>& ops,
                  std::unique_lock<std::mutex>& lock, int timeout_ms) {
  std::vector<MessageKey> mine;
  for (const Op& o : ops) {
    if (!is_p2p(o)) continue;
    const bool send = o.kind == Kind::kSend;
    const MessageKey key = send ? MessageKey{self.rank, o.root, o.seq}
                                : MessageKey{o.root, self.rank, o.seq};
    Message& m = clique.messages[key];
    (send ? m.send : m.recv) = &o;
    (send ? m.sender : m.receiver) = &self;
    ++m.posted;
    mine.push_back(key);
    if (m.send != nullptr && m.recv != nullptr) complete(clique, key, m);
  }
  if (mine.empty()) return;
  clique.cv.notify_all();
  auto all_done = [&] {
    for (const MessageKey& k : mine) {
      if (!clique.messages[k].done) return false;
    }
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const bool ended = clique.cv.wait_until(
      lock, deadline, [&] { return all_done() || clique.aborted || self.aborted; });
  for (const MessageKey& k : mine) {
    Message& m = clique.messages[k];
    if (!m.done && !ended) {
      // The partner never came: an error rather than NCCL's hang.
      const bool sent = m.send != nullptr;
      self.async = ncclInvalidUsage;
      clique.why = std::string(sent ? "ncclSend" : "ncclRecv") + " of rank " +
                   std::to_string(self.rank) + (sent ? " to rank " : " from rank ") +
                   std::to_string(sent ? std::get<1>(k) : std::get<0>(k)) + " (message " +
                   std::to_string(std::get<2>(k)) + ") found no matching " +
                   (sent ? "ncclRecv" : "ncclSend") + " within " + std::to_string(timeout_ms) +
                   " ms";
    }
    // A message not done has only this launch's half (both halves are
    // copied at once): it goes with the launch, whose operations it holds.
    m.done = true;
    if (--m.posted == 0) clique.messages.erase(k);
  }
  clique.cv.notify_all();
}

}  // namespace xalsim_nccl
