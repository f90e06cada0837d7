// A process of a job with a shared ledger for the exporter's tests
// (job_worker.c): copies on a 40% partition (device 2: the two default mock
// cards, then card 0's partitions) for `seconds`.
#pragma once

#include <string>

#include "child_process.hpp"

namespace xal::exporter::test {

class JobWorker {
 public:
  // Starts it with XAL_QUOTA_LEDGER=job and waits until its usage is in
  // the ledger (about 1.5 s).
  JobWorker(const std::string& job, double seconds);
  // Stops it and removes the ledger.
  ~JobWorker();
  bool ready() const { return ready_; }

 private:
  std::string job_;
  ChildProcess child_;
  bool ready_ = false;
};

}  // namespace xal::exporter::test
