// The direct path of point-to-point messages between processes of one host
// (transport_p2p.hpp): the receiver maps the sender's device memory and
// copies the message from it once, instead of the transport moving it.
//
// For a message of at least kMinBytes (both sides decide from their own
// size, the same way when the sizes agree):
//   sender:   a Descriptor (the IPC handle of the allocation holding the
//             data, the offset in it, the size) on the message's tag, then
//             waits for the receiver's one-word Reply on the reply tag;
//   receiver: takes the descriptor, opens the handle (IpcCache), copies
//             from the mapping into its destination and replies kDone.
// Memory that cannot be exported (imported memory, a backend without IPC,
// a peer that could not map it before) is marked so in the descriptor and
// its bytes follow at once on the payload tag, without a reply. A
// receiver that cannot map exported memory (another host or backend, no
// host view) replies kPayload: the bytes then follow likewise. A
// descriptor whose size differs from the receive's ends both sides with
// XAL_ERROR_COLLECTIVE_MISMATCH (kMismatch to a sender that waits; the
// bytes of an unexported one are taken into scratch memory). When only
// the send is at or above the threshold, the receive sees a message of
// another size (MISMATCH) and the sender, which waits for a reply that
// never comes, ends with TIMEOUT within the communicator's timeout; a
// receive of exactly a descriptor's size recognises the descriptor.
// Nothing is ever sent that the other side does not receive.
// XAL_P2P_DIRECT=0 turns the path off; it must be the same in every
// process.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "../objects.hpp"
#include "p2p_ipc_cache.hpp"
#include "xal/xal.h"

namespace xal::core {

// One message's transport calls: `bytes` on one of its tags, within
// `timeout_ms`. Called from the message's own thread.
struct DirectWire {
  enum Channel : uint8_t { kMessage = 0, kReply = 1, kPayload = 2 };
  std::function<xal_status_t(const void* buf, size_t bytes, Channel c, uint32_t timeout_ms,
                             std::string* why)>
      send;
  std::function<xal_status_t(void* buf, size_t bytes, Channel c, uint32_t timeout_ms,
                             std::string* why)>
      recv;
};

// One side of a message: the rank's device, its device pointer and the host
// view of it (the step's view: staging when the memory has none).
struct DirectEnd {
  DeviceObj* device = nullptr;
  xal_devptr_t ptr = 0;
  void* view = nullptr;
  size_t bytes = 0;
  uint32_t peer_process = 0;
  uint64_t tag = 0;
};

class DirectPath {
 public:
  static constexpr size_t kMinBytes = size_t{256} << 10;
  static constexpr size_t kMappings = 64;

  // `enabled`: from enabled_by_env(), read once per communicator set.
  DirectPath(bool enabled, uint32_t timeout_ms, size_t mappings = kMappings)
      : enabled_(enabled), timeout_ms_(timeout_ms), cache_(mappings) {}

  // False when XAL_P2P_DIRECT is "0". Thread-safe.
  static bool enabled_by_env();
  // Whether a message of `bytes` takes the direct protocol. Thread-safe.
  bool applies(size_t bytes) const { return enabled_ && bytes >= kMinBytes; }
  bool enabled() const { return enabled_; }
  uint32_t timeout_ms() const { return timeout_ms_; }

  // The sender's and receiver's side of a message that applies(). They
  // block until the message is over; failures set *why. Thread-safe: each
  // message on its own thread.
  xal_status_t send(const DirectEnd& e, const DirectWire& w, std::string* why);
  xal_status_t recv(const DirectEnd& e, const DirectWire& w, std::string* why);
  // A receive below the threshold while the path is on: the plain message;
  // one that meets a descriptor (of exactly its size) answers it as a
  // mismatch.
  xal_status_t recv_small(const DirectEnd& e, const DirectWire& w, std::string* why);

  // Messages copied from a mapping, and sent as payload. Thread-safe.
  uint64_t mapped() const { return mapped_.load(); }
  uint64_t payloads() const { return payloads_.load(); }
  const IpcCache& cache() const { return cache_; }

 private:
  bool export_ok(uint32_t peer) const;
  void no_export(uint32_t peer);

  const bool enabled_;
  const uint32_t timeout_ms_;
  IpcCache cache_;
  std::atomic<uint64_t> mapped_{0}, payloads_{0};
  mutable std::mutex mu_;
  std::set<uint32_t> unmappable_;  // peer processes that replied kPayload
};

}  // namespace xal::core
