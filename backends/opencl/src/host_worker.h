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

class HostWorker {
 public:
  HostWorker();
  // Runs the tasks still queued, then joins the thread.
  ~HostWorker();
  HostWorker(const HostWorker&) = delete;
  HostWorker& operator=(const HostWorker&) = delete;

  // Queues `task`. Thread-safe; callable from an OpenCL callback.
  void post(std::function<void()> task);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace xal::opencl
