#include "p2p_mailbox.hpp"

#include <chrono>

#include "../error.hpp"
#include "xal_common/reduce.hpp"

namespace xal::core {

struct Mailbox::Slot {
  Key key{};
  bool posted = false;
  bool taken = false;  // the receiver reads the data: the sender waits for it
  Message message;
  bool done = false;  // released by the receiver
  xal_status_t status = XAL_SUCCESS;
  std::string why;
};

namespace {

std::string name_of(const Mailbox::Key& k) {
  return cat("message #", std::get<2>(k) + 1, " from rank ", std::get<0>(k), " to rank ",
             std::get<1>(k));
}

}  // namespace

std::shared_ptr<Mailbox::Slot> Mailbox::slot_of(const Key& key) {
  auto& s = slots_[key];
  if (!s) {
    s = std::make_shared<Slot>();
    s->key = key;
  }
  return s;
}

xal_status_t Mailbox::wait(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Slot>& slot,
                           bool for_post, const Key& key, std::string* why) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
  // A message the receiver holds is waited for without limit: the receiver
  // reads the sender's buffer until it releases it, which it does at once.
  auto ready = [&] {
    if (for_post) return broken_ != XAL_SUCCESS || slot->posted;
    return slot->done || (broken_ != XAL_SUCCESS && !slot->taken);
  };
  if (!cv_.wait_until(lock, deadline, ready) && !for_post && slot->taken) cv_.wait(lock, ready);
  if (!ready()) {
    const std::string m =
        cat(name_of(key), ": ", for_post ? "the sender" : "the receiver",
            " did not reach it within ", timeout_ms_, " ms (XAL_COMM_TIMEOUT_MS); the "
            "communicator's point-to-point is broken");
    if (broken_ == XAL_SUCCESS) {
      broken_ = XAL_ERROR_TIMEOUT;
      broken_why_ = m;
    }
    cv_.notify_all();
    *why = m;
    return XAL_ERROR_TIMEOUT;
  }
  if (!for_post && slot->done) {  // released: the receiver's verdict stands
    *why = slot->why;
    return slot->status;
  }
  if (broken_ != XAL_SUCCESS) {
    *why = cat(name_of(key), ": ", broken_why_);
    return broken_;
  }
  return XAL_SUCCESS;
}

std::shared_ptr<Mailbox::Slot> Mailbox::post(const Key& key, const Message& m) {
  std::lock_guard lock(mu_);
  std::shared_ptr<Slot> s = slot_of(key);
  s->posted = true;
  s->message = m;
  cv_.notify_all();
  return s;
}

xal_status_t Mailbox::wait_taken(const std::shared_ptr<Slot>& slot, std::string* why) {
  std::unique_lock lock(mu_);
  const xal_status_t s = wait(lock, slot, false, slot->key, why);
  if (auto it = slots_.find(slot->key); it != slots_.end() && it->second == slot) slots_.erase(it);
  return s;
}

xal_status_t Mailbox::take(const Key& key, size_t count, xal_dtype_t dtype,
                           std::shared_ptr<Slot>* out_slot, Message* out, std::string* why) {
  std::unique_lock lock(mu_);
  std::shared_ptr<Slot> s = slot_of(key);
  if (xal_status_t st = wait(lock, s, true, key, why); st) {
    slots_.erase(key);
    return st;
  }
  slots_.erase(key);  // the sender keeps its own reference
  *out_slot = s;
  const Message& m = s->message;
  if (m.count == count && m.dtype == dtype) {
    s->taken = true;
    *out = m;
    return XAL_SUCCESS;
  }
  *why = cat(name_of(key), ": the send has ", m.count, " elements of ",
             common::dtype_name(m.dtype), ", the receive expects ", count, " elements of ",
             common::dtype_name(dtype));
  s->done = true;
  s->status = XAL_ERROR_COLLECTIVE_MISMATCH;
  s->why = *why;
  cv_.notify_all();
  return XAL_ERROR_COLLECTIVE_MISMATCH;
}

void Mailbox::release(const std::shared_ptr<Slot>& slot, xal_status_t status,
                      const std::string& why) {
  std::lock_guard lock(mu_);
  slot->done = true;
  slot->taken = false;
  slot->status = status;
  slot->why = why;
  cv_.notify_all();
}

void Mailbox::break_with(xal_status_t status, const std::string& why) {
  std::lock_guard lock(mu_);
  if (broken_ == XAL_SUCCESS) {
    broken_ = status;
    broken_why_ = why;
  }
  cv_.notify_all();
}

xal_status_t Mailbox::broken(std::string* why) const {
  std::lock_guard lock(mu_);
  if (why) *why = broken_why_;
  return broken_;
}

}  // namespace xal::core
