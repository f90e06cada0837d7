// The per-job and per-process families of xal-exporter, from the jobs'
// shared ledgers (telemetry::JobLedger): xal's own accounting of every
// process of each job, whichever process serves it. Labels: `job` (the
// ledger's name), `uuid` and `name` of the card or partition, and `pid` on
// per-process series. docs/TELEMETRY.md lists them.
#include <string>

#include "exposition.hpp"

namespace xal::exporter {

namespace {

constexpr const char* kGauge = "gauge";
constexpr const char* kCounter = "counter";

void usage_families(const std::string& prefix, const char* whose,
                    const xal_ledger_row_t& r, const Labels& l, Exposition& e) {
  e.add(prefix + "_utilization_ratio", kGauge,
        std::string("Fraction of the last second the device ran work of ") + whose +
            " through xal (device time on a partition; 0..1).",
        l, r.utilization_percent / 100.0);
  e.add(prefix + "_busy_seconds_total", kCounter,
        std::string("Device time of work of ") + whose + " through xal, seconds.", l,
        static_cast<double>(r.busy_ns) / 1e9);
  e.add_count(prefix + "_memory_used_bytes", kGauge,
              std::string("Device memory held through xal by ") + whose + ", bytes.", l,
              r.memory_bytes);
  e.add_count(prefix + "_copy_bytes_total", kCounter,
              std::string("Bytes copied through xal by ") + whose + ".", l,
              r.bytes_copied);
  e.add_count(prefix + "_collective_calls_total", kCounter,
              std::string("Collective operations run through xal by ") + whose + ".", l,
              r.collective_calls);
  e.add_count(prefix + "_allocations", kGauge,
              std::string("Live allocations made through xal by ") + whose + ".", l,
              r.allocations);
  e.add_count(prefix + "_errors_total", kCounter,
              std::string("Calls on the device by ") + whose + " that returned an error.",
              l, r.errors);
}

}  // namespace

void job_families(const telemetry::Snapshot& snap, Exposition& e) {
  for (const telemetry::JobLedger& job : snap.jobs) {
    e.add_count("xal_job_ledger_up", kGauge,
                "1 when the job's shared ledger was read, 0 when it could not be.",
                {{"job", job.name}}, job.error.empty() ? 1 : 0);
    for (const xal_ledger_row_t& r : job.rows) {
      const Labels l = {{"job", job.name},
                        {"uuid", tools::format_uuid(r.uuid)},
                        {"name", r.device_name}};
      if (r.pid != 0) {
        Labels p = l;
        p.emplace_back("pid", std::to_string(r.pid));
        usage_families("xal_process", "this process of the job", r, p, e);
        continue;
      }
      e.add("xal_job_compute_share_ratio", kGauge,
            "The compute share the job's processes draw from together on a "
            "partition (0..1); 0 on a whole card.",
            l, r.compute_percent / 100.0);
      e.add_count("xal_job_process_count", kGauge,
                  "Live processes of the job on the device.", l, r.processes);
      if (r.limit_bytes != 0) {
        e.add_count("xal_job_memory_limit_bytes", kGauge,
                    "The job-wide memory limit in force on the device, bytes.", l,
                    r.limit_bytes);
      }
      usage_families("xal_job", "every process of the job", r, l, e);
    }
  }
}

}  // namespace xal::exporter
