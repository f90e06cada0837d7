// The commands of one stream whose outcome is not yet known, and a failure
// found among them that no call has reported yet.
//
// OpenCL reports a failed command only through its event's execution
// status (clFinish does not), so the stream keeps the event of every command
// that is not known complete, not only the newest: a failed command is then
// reported by the next stream_synchronize, stream_query, stream_destroy or
// device_synchronize even when later commands succeeded. A failure is
// reported once, to one call, and then cleared. Completed events are dropped
// when the list has doubled since it was last looked at, so that a stream
// that is never synchronised holds about as many events as it has commands
// in flight.
#pragma once

#include "dynamic_symbols.h"

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <vector>

namespace xal::opencl {

// Thread-safe. Held by its stream and (shared_ptr) by a device_synchronize
// that may still read it after the stream was destroyed; `api` must outlive
// it (the backend instance does: no entry runs during shutdown).
class CommandLog {
 public:
  explicit CommandLog(const ClApi& api) : api_(api) {}
  ~CommandLog() {
    for (cl_event ev : events_) api_.clReleaseEvent(ev);
  }
  CommandLog(const CommandLog&) = delete;
  CommandLog& operator=(const CommandLog&) = delete;

  // Where the commands of one submission leave their events.
  class Batch {
   public:
    // A NULL slot for the event of the next command; valid until the next
    // call. Every event left in a slot is kept, also when a later command
    // of the submission fails to enqueue (what was enqueued runs).
    cl_event* next() {
      events_.push_back(nullptr);
      return &events_.back();
    }

   private:
    friend class CommandLog;
    explicit Batch(std::vector<cl_event>& events) : events_(events) {}
    std::vector<cl_event>& events_;
  };

  // Runs `enqueue(Batch&)` (returns a CL code) under the log's lock, so
  // that submissions of several threads are logged in the order they were
  // enqueued, and keeps the events it left. Returns enqueue's code.
  // `enqueue` must not submit to the same stream again.
  template <typename F>
  cl_int submit(F&& enqueue) {
    std::lock_guard lock(mutex_);
    const size_t before = events_.size();
    Batch batch(events_);
    const cl_int rc = enqueue(batch);
    events_.erase(std::remove(events_.begin() + static_cast<std::ptrdiff_t>(before),
                              events_.end(), nullptr),
                  events_.end());
    if (events_.size() >= prune_at_) prune_locked();
    return rc;
  }

  // Records `code` (negative) as a failure of the stream for the next call
  // that reports one (a flush that failed after its work was committed).
  void fail(cl_int code) {
    std::lock_guard lock(mutex_);
    if (failed_ == CL_SUCCESS) failed_ = code;
  }

  // Drops the events of commands that are complete. Returns the first
  // failure not yet reported, and clears it (CL_SUCCESS when none); sets
  // *busy when a command is still neither complete nor failed.
  cl_int collect(bool* busy = nullptr) {
    std::lock_guard lock(mutex_);
    prune_locked();
    const cl_int failed = failed_;
    failed_ = CL_SUCCESS;
    if (busy != nullptr) *busy = !events_.empty();
    return failed;
  }

 private:
  static constexpr size_t kMinPrune = 64;

  // Needs the lock. An event whose status cannot be read counts as
  // complete (as command_error does).
  void prune_locked() {
    auto kept = events_.begin();
    for (cl_event ev : events_) {
      cl_int status = CL_COMPLETE;
      const cl_int rc = api_.clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                            sizeof(status), &status, nullptr);
      if (rc == CL_SUCCESS && status > CL_COMPLETE) {
        *kept++ = ev;  // queued, submitted or running
        continue;
      }
      if (rc == CL_SUCCESS && status < 0 && failed_ == CL_SUCCESS) failed_ = status;
      api_.clReleaseEvent(ev);
    }
    events_.erase(kept, events_.end());
    prune_at_ = std::max(kMinPrune, 2 * events_.size());
  }

  const ClApi& api_;
  std::mutex mutex_;
  std::vector<cl_event> events_;  // owned references, oldest first
  size_t prune_at_ = kMinPrune;   // prune at submit from this many events
  cl_int failed_ = CL_SUCCESS;    // not yet reported
};

}  // namespace xal::opencl
