// Stream: an in-order queue of work on a simulated device, run by one
// worker thread per stream. Copies, memsets, kernels, event records, waits
// and host functions are all tasks; a collective can be queued the same way.
// Thread-safe: enqueue/synchronize/idle may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "errors.h"
#include "xal/xal.h"

namespace xal::mock {

class BusyTracker;
class Device;

class Stream {
 public:
  using Clock = std::chrono::steady_clock;
  using Body = std::function<void()>;

  struct Task {
    Body body;
    // True for device work (copies, kernels, collectives), which counts as
    // busy time for utilization; false for records, waits, host functions.
    bool device_work = true;
  };

  // Starts the worker. `device` and `busy` (the device's) outlive it.
  Stream(Device& device, uint32_t flags, BusyTracker& busy);
  // Drains the queue, then joins the worker.
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Queues a task behind all earlier ones. Throws std::bad_alloc.
  void enqueue(Task task);
  // Runs `body` at once on the calling thread when the stream is idle
  // (nothing queued or running), which saves the hand-off to the worker and
  // the allocation of a queued task; work submitted meanwhile waits behind
  // it. Otherwise queues it. Returns true when it ran inline.
  template <class F>
  bool run_or_enqueue(F&& body, bool device_work) {
    Clock::time_point start;
    if (!begin_inline(device_work, &start)) {
      enqueue({Body(std::forward<F>(body)), device_work});
      return false;
    }
    std::string message;
    const xal_status_t status = invoke(body, &message);
    end_inline(start, device_work, status, std::move(message));
    return true;
  }
  // Blocks until every task queued so far has run. Returns the first error
  // a task raised since the last synchronize (and clears it).
  xal_status_t synchronize(std::string* out_message);
  // Blocks until every task queued so far has run, leaving any error for
  // the next synchronize.
  void drain();
  // True when all queued work has run.
  bool idle() const;
  // Start of the task now running, if it is device work.
  bool running_since(Clock::time_point* out) const;
  uint32_t flags() const { return flags_; }
  Device& device() const { return device_; }

 private:
  void run();
  // Runs `body`, turning an exception into a status and message.
  template <class F>
  static xal_status_t invoke(F& body, std::string* out_message) noexcept;
  // Records busy time and the first error of a task that has run.
  void finish(Clock::time_point start, bool device_work, xal_status_t status,
              std::string message);
  bool begin_inline(bool device_work, Clock::time_point* out_start);
  void end_inline(Clock::time_point start, bool device_work,
                  xal_status_t status, std::string message);

  Device& device_;
  const uint32_t flags_;
  BusyTracker& busy_;
  mutable std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<Task> queue_;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  bool stopping_ = false;
  bool running_device_work_ = false;
  bool inline_running_ = false;  // a task runs on a caller's thread
  Clock::time_point running_since_{};
  xal_status_t error_ = XAL_SUCCESS;
  std::string error_message_;
  std::thread worker_;
};

template <class F>
xal_status_t Stream::invoke(F& body, std::string* out_message) noexcept {
  try {
    body();
    return XAL_SUCCESS;
  } catch (const Error& e) {
    *out_message = e.what();
    return e.status();
  } catch (const std::bad_alloc&) {
    *out_message = "out of host memory while running queued work";
    return XAL_ERROR_OUT_OF_HOST_MEMORY;
  } catch (const std::exception& e) {
    *out_message = std::string("queued work failed: ") + e.what();
    return XAL_ERROR_INTERNAL;
  } catch (...) {
    *out_message = "queued work failed";
    return XAL_ERROR_INTERNAL;
  }
}

}  // namespace xal::mock
