// Where the point-to-point messages of the ranks of one process meet.
//
// A message is named by (sender, receiver, sequence): the k-th send of rank
// a to rank b meets the k-th receive of b from a. The sender posts a host
// view of its data and waits until the receiver has taken it (the
// receiver copies or reduces straight out of the sender's buffer, one pass
// over the data); the receiver waits for the post, checks that count and
// dtype agree (else both get COLLECTIVE_MISMATCH for that message only),
// uses the data and releases the message.
//
// Waits end with TIMEOUT after the communicator's timeout, which breaks the
// mailbox (sticky, as a collective's timeout: sequences no longer pair);
// break_with (xal_comm_abort: ABORTED) ends every wait at once and fails
// every later one. Thread-safe: the ranks' stream threads use it at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "xal/xal.h"

namespace xal::core {

class Mailbox {
 public:
  struct Message {
    const void* data = nullptr;  // host view of the sender's elements
    size_t count = 0;
    xal_dtype_t dtype = XAL_DTYPE_U8;
  };
  struct Slot;  // one message's meeting
  using Key = std::tuple<uint32_t, uint32_t, uint64_t>;  // sender, receiver, sequence

  explicit Mailbox(uint32_t timeout_ms) : timeout_ms_(timeout_ms) {}

  // Sender: posts `m`; wait_taken then waits for the receiver.
  std::shared_ptr<Slot> post(const Key& key, const Message& m);
  xal_status_t wait_taken(const std::shared_ptr<Slot>& slot, std::string* why);

  // Receiver: waits for the message and checks that it holds `count`
  // elements of `dtype`; on success *out is the sender's message, which
  // stays valid until release(). On failure the message is released
  // already.
  xal_status_t take(const Key& key, size_t count, xal_dtype_t dtype,
                    std::shared_ptr<Slot>* out_slot, Message* out, std::string* why);
  // Tells the sender that its message was used (or failed with `status`).
  void release(const std::shared_ptr<Slot>& slot, xal_status_t status, const std::string& why);

  // Ends every wait now and later with `status` (sticky; the first wins).
  void break_with(xal_status_t status, const std::string& why);
  xal_status_t broken(std::string* why) const;
  uint32_t timeout_ms() const { return timeout_ms_; }

 private:
  std::shared_ptr<Slot> slot_of(const Key& key);  // with mu_ held
  xal_status_t wait(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Slot>& slot,
                    bool for_post, const Key& key, std::string* why);

  const uint32_t timeout_ms_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, std::shared_ptr<Slot>> slots_;
  xal_status_t broken_ = XAL_SUCCESS;
  std::string broken_why_;
};

}  // namespace xal::core
