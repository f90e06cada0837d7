#include "host_worker.h"

namespace xal::opencl {

HostWorker::HostWorker() : thread_([this] { run(); }) {}

HostWorker::~HostWorker() { stop(); }

bool HostWorker::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (stop_) return false;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void HostWorker::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HostWorker::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stop_ and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace xal::opencl
