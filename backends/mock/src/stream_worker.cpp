#include "stream_worker.h"

#include <pthread.h>

#include <new>

#include "device.h"
#include "errors.h"
#include "metrics.h"

namespace xal::mock {

Stream::Stream(Device& device, uint32_t flags, BusyTracker& busy)
    : device_(device), flags_(flags), busy_(busy) {
  worker_ = std::thread([this] { run(); });
  const std::string name = "xal-mock" + std::to_string(device.index());
  pthread_setname_np(worker_.native_handle(), name.substr(0, 15).c_str());
}

Stream::~Stream() {
  {
    std::unique_lock lock(mutex_);
    done_cv_.wait(lock, [this] { return completed_ == submitted_; });
    stopping_ = true;
  }
  work_cv_.notify_all();
  worker_.join();
}

void Stream::enqueue(Task task) {
  std::lock_guard lock(mutex_);
  queue_.push_back(std::move(task));
  ++submitted_;
  // Under the lock: once it is released the task may run, a synchronizer
  // return and the stream be destroyed.
  work_cv_.notify_one();
}

void Stream::drain() {
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [this] { return completed_ == submitted_; });
}

xal_status_t Stream::synchronize(std::string* out_message) {
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [this] { return completed_ == submitted_; });
  const xal_status_t status = error_;
  if (out_message) *out_message = error_message_;
  error_ = XAL_SUCCESS;
  error_message_.clear();
  return status;
}

bool Stream::idle() const {
  std::lock_guard lock(mutex_);
  return completed_ == submitted_;
}

bool Stream::running_since(Clock::time_point* out) const {
  std::lock_guard lock(mutex_);
  if (!running_device_work_) return false;
  *out = running_since_;
  return true;
}

void Stream::finish(Clock::time_point start, bool device_work,
                    xal_status_t status, std::string message) {
  if (device_work) busy_.end(start, Clock::now());
  if (status != XAL_SUCCESS) {
    std::lock_guard lock(mutex_);
    if (error_ == XAL_SUCCESS) {
      error_ = status;
      error_message_ = std::move(message);
    }
  }
}

bool Stream::begin_inline(bool device_work, Clock::time_point* out_start) {
  std::lock_guard lock(mutex_);
  if (completed_ != submitted_) return false;
  ++submitted_;
  inline_running_ = true;
  *out_start = Clock::now();
  running_device_work_ = device_work;
  running_since_ = *out_start;
  if (device_work) busy_.begin(*out_start);
  return true;
}

void Stream::end_inline(Clock::time_point start, bool device_work,
                        xal_status_t status, std::string message) {
  finish(start, device_work, status, std::move(message));
  std::lock_guard lock(mutex_);
  inline_running_ = false;
  running_device_work_ = false;
  ++completed_;
  if (completed_ == submitted_) done_cv_.notify_all();
  // Work queued meanwhile may start now. Notified under the lock: once it
  // is released a synchronizer may destroy the stream.
  if (!queue_.empty()) work_cv_.notify_one();
}

void Stream::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [this] {
      return (stopping_ && !inline_running_) || (!queue_.empty() && !inline_running_);
    });
    if (queue_.empty()) return;  // stopping and drained
    Task task = std::move(queue_.front());
    queue_.pop_front();
    const Clock::time_point start = Clock::now();
    running_device_work_ = task.device_work;
    running_since_ = start;
    if (task.device_work) busy_.begin(start);
    lock.unlock();
    std::string message;
    const xal_status_t status = invoke(task.body, &message);
    task.body = nullptr;  // release captures before reporting completion
    finish(start, task.device_work, status, std::move(message));
    lock.lock();
    running_device_work_ = false;
    ++completed_;
    if (completed_ == submitted_) done_cv_.notify_all();
  }
}

}  // namespace xal::mock
