// A child process that runs xal and obeys one-line commands on a pipe, for
// the tests of quotas shared between processes. The test program re-executes
// itself with --quota-worker (quota_ledger_main.cpp).
#pragma once

#include <sys/types.h>

#include <string>

namespace xal_test {

// Runs the worker loop on stdin/stdout on device 0 (or the index in
// XAL_QUOTA_WORKER_DEVICE); returns the exit code.
//   alloc N   -> "ok" | "err STATUS message"
//   free      -> frees the latest allocation still held
//   info      -> "info FREE TOTAL"       (xal_mem_get_info)
//   metrics   -> "limit N"                (memory_limit_bytes of the metrics)
//   job       -> "job USED PROCESSES" | "job none" (the metrics' job fields)
//   procs     -> "procs PID:BYTES:LIMIT[:self] ..." (xal_device_get_job_processes)
//   usage     -> "usage COPIED BUSY_NS ALLOCATIONS" (its own entry's usage)
//   limit N   -> xal_device_set_memory_limit(N)
//   reset     -> xal_device_reset
//   copies START END W0 W1 -> "copied BYTES" (job_share_worker.cpp)
//   churn N   -> "churning", then allocations, frees and limits of random
//                sizes (seed N) until the process is killed
//   crash     -> _exit(3) without freeing or shutting down
//   quit      -> xal_shutdown, exit 0
int quota_worker_main();

// Saturates `dev` with throttled copies from START to END (steady_clock
// nanoseconds) and returns the bytes copied by the ops submitted within
// [W0, W1); "err ..." in *error on a failure. (job_share_worker.cpp)
uint64_t saturate_with_copies(void* dev, int64_t start, int64_t end, int64_t w0,
                              int64_t w1, std::string* error);

// The parent's side: starts the worker with the current environment.
class QuotaWorker {
 public:
  QuotaWorker();
  ~QuotaWorker();  // kills a worker still running and reaps it
  QuotaWorker(const QuotaWorker&) = delete;
  QuotaWorker& operator=(const QuotaWorker&) = delete;

  // Sends one command and returns the reply line ("" on a dead worker or
  // after 60 s without a reply).
  std::string call(const std::string& command);
  // call() in two halves, to keep several workers busy at once.
  bool send(const std::string& command);
  std::string reply() { return read_line(); }
  // The first line the worker wrote: "ready" or "err ...".
  const std::string& greeting() const { return greeting_; }
  // Sends "crash" or "quit" and waits for the exit; returns the exit code.
  int finish(const std::string& command);
  // Kills the worker with SIGKILL wherever it is and reaps it; returns the
  // signal that ended it (SIGKILL), -1 when there was no worker.
  int kill9();
  pid_t pid() const { return pid_; }

 private:
  std::string read_line();
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_, greeting_;
};

}  // namespace xal_test
