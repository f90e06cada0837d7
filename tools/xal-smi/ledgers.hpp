// The jobs' shared ledgers (XAL_QUOTA_LEDGER) of the calling user, read
// through xal_ledger_read: per job, per device (card or partition) and per
// process, memory and usage from xal's own accounting. Part of the
// xal_telemetry library (xal-smi, xal-exporter).
#pragma once

#include <string>
#include <vector>

#include "xal/xal.h"

namespace xal::telemetry {

struct JobLedger {
  std::string name;   // the job's XAL_QUOTA_LEDGER
  std::string error;  // "" when read; else why not (rows then empty)
  // Per device: its job row (pid 0), then its processes' rows.
  std::vector<xal_ledger_row_t> rows;
};

// The names of the ledgers of the calling user in `dir` (files named
// xal-ledger-<uid>-<name>), sorted.
std::vector<std::string> ledger_names(const std::string& dir = "/dev/shm");

// Reads each ledger of ledger_names(dir), leaving out the devices where a
// job holds no memory and did nothing (only limits: a partition's size is
// the limit of every process that made it). Needs no xal_init.
std::vector<JobLedger> read_job_ledgers(const std::string& dir = "/dev/shm");

// The name of process `pid` (/proc/PID/comm), "" when it cannot be read.
std::string process_name(int32_t pid);

}  // namespace xal::telemetry
