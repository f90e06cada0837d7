// Point-to-point pairing and the streams' failures (message_pairs.h).
#include "xalsupport/message_pairs.h"

#include "xal_common/reduce.hpp"

namespace xal::support {
namespace {

std::string describe(const PostedMessage& m) {
  return std::to_string(m.count) + " x " + common::dtype_name(m.dtype);
}

}  // namespace

std::optional<MessageMismatch> MessagePairs::post(bool send, uint32_t rank, uint32_t peer,
                                                  const PostedMessage& message) {
  const uint32_t from = send ? rank : peer;
  const uint32_t to = send ? peer : rank;
  std::lock_guard<std::mutex> lock(mutex_);
  Waiting& waiting = pairs_[{from, to}];
  if (waiting.messages.empty() || waiting.sends == send) {
    waiting.sends = send;
    waiting.messages.push_back(message);
    return std::nullopt;
  }
  const PostedMessage partner = waiting.messages.front();
  waiting.messages.pop_front();
  const PostedMessage& s = send ? message : partner;
  const PostedMessage& r = send ? partner : message;
  if (s.count == r.count && s.dtype == r.dtype) return std::nullopt;
  return MessageMismatch{s.stream, r.stream,
                         "the send of rank " + std::to_string(from) + " to rank " +
                             std::to_string(to) + " has " + describe(s) +
                             ", its matching receive " + describe(r)};
}

void StreamFailures::note(const void* stream, xal_status_t status,
                          const std::string& message) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    failures_.try_emplace(stream, status, message);
    any_.store(true, std::memory_order_release);
  } catch (...) {  // out of memory: the failure is lost, not the process
  }
}

xal_status_t StreamFailures::take(const void* stream, std::string* out_message) {
  if (!any_.load(std::memory_order_acquire)) return XAL_SUCCESS;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = failures_.find(stream);
  if (it == failures_.end()) return XAL_SUCCESS;
  const xal_status_t status = it->second.first;
  *out_message = std::move(it->second.second);
  failures_.erase(it);
  any_.store(!failures_.empty(), std::memory_order_release);
  return status;
}

void StreamFailures::forget(const void* stream) noexcept {
  if (!any_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  failures_.erase(stream);
  any_.store(!failures_.empty(), std::memory_order_release);
}

}  // namespace xal::support
