// host_funcs.h -- host functions queued on a stream, run on a thread of
// that stream so that they may wait for one another.
//
// The driver may run the host functions of a context's streams one at a
// time on one thread (cuLaunchHostFunc: "may be serialized"), and one that
// waits for another stream's host function then waits forever. The core's
// collectives queue exactly such functions: a rank's staging streams wait
// for each other, and ranks of one process wait for each other. So each
// stream that gets host functions has a HostFuncRunner: the host function
// given to the driver only marks the job reached and wakes the runner's
// thread (it never blocks), and the stream then waits with
// cuStreamWaitValue32 on a page-locked counter that the thread sets once
// the job's function has returned. The stream's order is kept: the function
// runs after the work queued before it, and the work queued after it waits
// until it returns.
//
// The counter is memory xal allocates and registers with the driver
// (cuMemHostRegister), not cuMemHostAlloc's, so that it stays valid when a
// reset of the device drops the context's page-locked memory.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "dynamic_symbols.h"

struct xal_bdevice_s;

namespace xal::cuda {

class HostFuncRunner {
  struct Token {};  // only create() constructs

 public:
  // A runner for `stream` of `device` (its context current on the calling
  // thread). Returns null, with the failed driver call in *out_call and its
  // result in *out_result (CUDA_ERROR_NOT_SUPPORTED and a description when
  // the driver lacks a function), when the driver cannot wait on host
  // memory; the caller then uses cuLaunchHostFunc alone.
  static std::unique_ptr<HostFuncRunner> create(xal_bdevice_s* device,
                                                CUstream stream,
                                                const char** out_call,
                                                CUresult* out_result);
  // Stops the thread. Jobs the stream never reached (a stream of a context
  // that was reset) are dropped without running. The stream must be idle or
  // dead. Not thread-safe against enqueue().
  ~HostFuncRunner();
  HostFuncRunner(Token, xal_bdevice_s* device, CUstream stream);
  HostFuncRunner(const HostFuncRunner&) = delete;
  HostFuncRunner& operator=(const HostFuncRunner&) = delete;

  // Queues fn(user) on the stream (context current on the calling thread).
  // On failure returns the driver's result with the call in *out_call, and
  // fn will not run. Calls for one stream must not overlap (the caller,
  // stream.cpp, holds the stream's host_funcs_mutex): the ticket order must
  // be the order of the driver calls.
  CUresult enqueue(void (*fn)(void*), void* user, const char** out_call);

 private:
  struct Job {
    HostFuncRunner* runner = nullptr;
    void (*fn)(void*) = nullptr;
    void* user = nullptr;
    uint32_t ticket = 0;
    bool reached = false;
  };

  static void CUDA_CB reached(void* job);
  void run();

  xal_bdevice_s* device_;
  const DriverSymbols& driver_;
  CUstream stream_;
  uint32_t* counter_ = nullptr;  // one page, registered with the driver
  CUdeviceptr counter_device_ = 0;
  bool registered_ = false;

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Job>> jobs_;  // in stream order
  std::unordered_set<Job*> inline_;  // run by reached() itself (see enqueue)
  uint32_t next_ticket_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace xal::cuda
