// The outcome of the leaders' exchange step of one grouped call, for the
// members of a native group that did not run it (hierarchical.cpp): the
// rank that took the group's slot reports it, and every other member's
// stream waits for it in a host function queued after the member's native
// part, then fails as the taker's stream does. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "xal/xal.h"

namespace xal::core {

class GroupOutcome {
 public:
  // The taker's side: its step failed (the first failure is kept).
  void fail(xal_status_t status, const std::string& message) {
    std::lock_guard lock(mu_);
    if (status_ != XAL_SUCCESS) return;
    status_ = status;
    message_ = message;
  }
  // The taker's step is over (or was never queued).
  void finish() noexcept {
    std::lock_guard lock(mu_);
    done_ = true;
    cv_.notify_all();
  }

  // A member's side: waits until the taker's step is over, or until
  // `broken` returns the communicator's sticky error (looked at every
  // 100 ms; a broken communicator has no step left to wait for). Returns
  // the failure, with its message, or XAL_SUCCESS.
  xal_status_t wait(const std::function<xal_status_t(std::string*)>& broken,
                    std::string* message) {
    std::unique_lock lock(mu_);
    while (!done_) {
      lock.unlock();
      if (const xal_status_t s = broken(message); s != XAL_SUCCESS) return s;
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return done_; });
    }
    *message = message_;
    return status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  xal_status_t status_ = XAL_SUCCESS;
  std::string message_;
};

// The taker's hold on an outcome: finishes it when destroyed (the call's
// shared state holds it, so that is when its step is over). Move-only;
// an empty one does nothing.
class OutcomeReport {
 public:
  OutcomeReport() = default;
  explicit OutcomeReport(std::shared_ptr<GroupOutcome> o) : outcome_(std::move(o)) {}
  OutcomeReport(OutcomeReport&&) noexcept = default;
  OutcomeReport& operator=(OutcomeReport&& o) noexcept {
    if (this != &o) {
      reset();
      outcome_ = std::move(o.outcome_);
    }
    return *this;
  }
  ~OutcomeReport() { reset(); }

  explicit operator bool() const { return outcome_ != nullptr; }
  void fail(xal_status_t status, const std::string& message) {
    if (outcome_) outcome_->fail(status, message);
  }
  void reset() noexcept {
    if (outcome_) outcome_->finish();
    outcome_.reset();
  }

 private:
  std::shared_ptr<GroupOutcome> outcome_;
};

}  // namespace xal::core
