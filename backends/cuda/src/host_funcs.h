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
//
// A host function's argument belongs to the function (the core's are freed
// by the function itself: cross-backend waits, staged copies' gates,
// compute-share completions), so every queued function runs once, even
// where the driver never calls it: after an error in the context
// (cuLaunchHostFunc: "the function will not be called in the event of an
// error in the CUDA context") or a reset of it. Those run when the stream
// is released (HostFuncRunner's and DriverHostFuncs' destructors).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "dynamic_symbols.h"

struct xal_bdevice_s;

namespace xal::cuda {

// True while the calling thread runs a job on a HostFuncRunner's thread;
// false on the driver's callback thread (a job run by reached() itself, or
// given straight to the driver), where no driver call is allowed
// (cuLaunchHostFunc) and nothing may block.
bool on_host_func_thread();

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
  // Stops the thread, after it has run, in stream order, the jobs the
  // stream never reached (a stream with a sticky error, or of a context that
  // was reset: the driver will not reach them). Returns once they have
  // returned. The stream must be idle or dead (its driver calls no more
  // host function), and the caller must hold no lock a job may need (a
  // job may call the backend). Not thread-safe against enqueue().
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
  bool stop_ = false;  // run what is left, then end
  std::thread thread_;
};

// Host functions given straight to the driver (cuLaunchHostFunc), for a
// stream without a HostFuncRunner (XAL_CUDA_HOST_FUNCS=driver, or a driver
// that cannot wait on host memory). Each goes through a record, so that the
// functions the driver never calls still run when the stream is released.
// The driver's calls may come from any thread.
class DriverHostFuncs {
 public:
  DriverHostFuncs(const DriverSymbols& driver, CUstream stream)
      : driver_(driver), stream_(stream) {}
  // Runs, on the calling thread and in stream order, the functions the
  // driver has not called. The stream must be idle or dead (its driver
  // calls no more host function), and the caller must hold no lock a
  // function may need.
  ~DriverHostFuncs();
  DriverHostFuncs(const DriverHostFuncs&) = delete;
  DriverHostFuncs& operator=(const DriverHostFuncs&) = delete;

  // Queues fn(user) on the stream (context current on the calling thread).
  // On failure returns the driver's result, and fn will not run. Calls for
  // one stream must not overlap (stream.cpp holds the stream's
  // host_funcs_mutex): the records' order must be that of the driver calls.
  CUresult enqueue(void (*fn)(void*), void* user);

 private:
  struct Record {
    DriverHostFuncs* owner = nullptr;
    uint64_t sequence = 0;
    void (*fn)(void*) = nullptr;
    void* user = nullptr;
  };

  static void CUDA_CB called(void* record);

  const DriverSymbols& driver_;
  CUstream stream_;
  std::mutex mutex_;
  std::map<uint64_t, std::unique_ptr<Record>> pending_;  // in stream order
  uint64_t next_sequence_ = 0;
};

}  // namespace xal::cuda
