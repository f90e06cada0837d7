// Point-to-point pairing as xal defines it, for the backends whose library
// does not check it (NCCL and RCCL pair a send with a receive by order and
// leave a disagreement on count or dtype undefined): the k-th send of rank
// a to rank b pairs with the k-th receive of b from a; a pair that
// disagrees is reported on both ranks' streams (StreamFailures), which
// their next synchronize returns.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "xal/xal.h"

namespace xal::support {

// What one send or receive posted. `stream` only names the stream (never
// dereferenced).
struct PostedMessage {
  size_t count = 0;
  xal_dtype_t dtype = XAL_DTYPE_U8;
  const void* stream = nullptr;
};

// A pair that disagrees: both streams and the reason.
struct MessageMismatch {
  const void* send_stream = nullptr;
  const void* recv_stream = nullptr;
  std::string why;
};

// The sends and receives of one communicator's ranks, paired as they are
// posted. Thread-safe.
class MessagePairs {
 public:
  // Posts the next send of `rank` to `peer` (`send`) or the next receive
  // of `rank` from `peer`: the mismatch when its partner was posted
  // already and disagrees, nullopt otherwise.
  std::optional<MessageMismatch> post(bool send, uint32_t rank, uint32_t peer,
                                      const PostedMessage& message);

 private:
  // One direction of a pair: the messages of one side not yet paired (the
  // other side has none then).
  struct Waiting {
    bool sends = true;
    std::deque<PostedMessage> messages;
  };
  std::mutex mutex_;
  std::map<std::pair<uint32_t, uint32_t>, Waiting> pairs_;  // by (from, to)
};

// Failures of work queued on a backend's streams that the vendor's stream
// cannot carry: the first per stream, returned once by the stream's next
// synchronize or completed query. Thread-safe; costs one atomic load while
// no stream has one.
class StreamFailures {
 public:
  void note(const void* stream, xal_status_t status, const std::string& message) noexcept;
  // The failure noted for `stream` (removed) with its message, or
  // XAL_SUCCESS.
  xal_status_t take(const void* stream, std::string* out_message);
  // Drops what was noted for `stream` (it is being destroyed).
  void forget(const void* stream) noexcept;

 private:
  std::mutex mutex_;
  std::atomic<bool> any_{false};
  std::unordered_map<const void*, std::pair<xal_status_t, std::string>> failures_;
};

}  // namespace xal::support
