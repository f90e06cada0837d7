// A host thread that runs queued tasks in order: host functions of one
// stream run here, never on the OpenCL runtime's callback thread, so a
// function may call blocking OpenCL or xal functions.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace xal::opencl {

// Shared (shared_ptr) by its stream and the marker callbacks that post to
// it, which may run after the stream is gone. Thread-safe.
class HostWorker {
 public:
  HostWorker();
  // stop(). Must not run on the worker thread (its stream stops it first).
  ~HostWorker();
  HostWorker(const HostWorker&) = delete;
  HostWorker& operator=(const HostWorker&) = delete;

  // Queues `task`; false (and `task` is not run) once stop() began.
  // Callable from an OpenCL callback.
  bool post(std::function<void()> task);
  // Runs the tasks still queued, then joins the thread. Idempotent; not
  // from the worker thread.
  void stop();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace xal::opencl
