// A simulated queue: one thread that runs enqueued work in order, so that
// the simulated driver is asynchronous to the host like a real one. Shared
// by the simulated HIP runtime and Level Zero loader. Every member function
// is thread-safe; work must not wait on its own worker.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace xalsim {

class Worker {
 public:
  Worker() : thread_([this] { run(); }) {}
  // Runs what is still queued, then stops.
  ~Worker() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Queues `work` (owned by the worker from now on) to run after the work
  // queued before it.
  void enqueue(std::function<void()> work) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(work));
      ++submitted_;
    }
    wake_.notify_all();
  }
  // Whether everything queued so far has run.
  bool idle() {
    std::lock_guard lock(mutex_);
    return done_ == submitted_;
  }
  // Blocks until everything queued so far has run.
  void wait_idle() {
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return done_ == submitted_; });
  }

 private:
  void run() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
      {
        std::lock_guard lock(mutex_);
        ++done_;
      }
      finished_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::deque<std::function<void()>> queue_;
  uint64_t submitted_ = 0;
  uint64_t done_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace xalsim
