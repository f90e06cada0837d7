// Publishes this process's usage of each device into the shared quota
// ledger (XAL_QUOTA_LEDGER), about every 100 ms, on a thread of its own:
// bytes copied, collectives, allocations, errors (the device's counters)
// and, on partitions, the device time of its work; and reclaims the entries
// of the job's processes that died, so that tools reading the ledger see
// them go. Off the submit path: the counters are read where they are kept.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "quota_ledger.hpp"

namespace xal::core {

class LedgerPublisher {
 public:
  // Starts publishing into `ledger`, which must outlive this object.
  explicit LedgerPublisher(QuotaLedger& ledger);
  // Stops the thread.
  ~LedgerPublisher();
  LedgerPublisher(const LedgerPublisher&) = delete;
  LedgerPublisher& operator=(const LedgerPublisher&) = delete;

 private:
  void run();
  void publish_all();

  QuotaLedger& ledger_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace xal::core
