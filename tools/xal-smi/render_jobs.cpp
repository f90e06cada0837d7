// xal-smi's view of the jobs' shared ledgers: per job, per card or
// partition and per process, xal's own accounting (render.hpp).
#include <cstdio>

#include "render.hpp"
#include "table.hpp"
#include "xal_common/strings.hpp"

namespace xal::smi {
namespace {

std::string percent_cell(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", value);
  return buf;
}

std::string device_cell(const xal_ledger_row_t& r) {
  std::string text = r.device_name[0] ? r.device_name : tools::format_uuid(r.uuid);
  if (r.compute_percent != 0) text += " @" + std::to_string(r.compute_percent) + "%";
  return text;
}

nlohmann::json row_json(const xal_ledger_row_t& r) {
  nlohmann::json j = {{"memory_bytes", r.memory_bytes},
                      {"busy_ns", r.busy_ns},
                      {"utilization_percent", r.utilization_percent},
                      {"bytes_copied", r.bytes_copied},
                      {"collective_calls", r.collective_calls},
                      {"collective_bytes", r.collective_bytes},
                      {"allocations", r.allocations},
                      {"errors", r.errors}};
  if (r.pid != 0) {
    j["pid"] = r.pid;
    j["process"] = telemetry::process_name(r.pid);
  }
  return j;
}

}  // namespace

void render_jobs_text(const telemetry::Snapshot& snap, std::ostream& out) {
  using common::format_bytes;
  if (snap.jobs.empty()) return;
  Table table({"Job", "Device", "PID", "Process", "Util", "Memory", "Copied",
               "Coll calls", "Allocs", "Errors"},
              {false, false, true, false, true, true, true, true, true, true});
  for (const telemetry::JobLedger& job : snap.jobs) {
    if (!job.error.empty()) {
      table.add_row({job.name, "(cannot be read: " + job.error + ")"});
      continue;
    }
    for (const xal_ledger_row_t& r : job.rows) {
      const bool total = r.pid == 0;
      const std::string procs = std::to_string(r.processes) +
                                (r.processes == 1 ? " proc" : " procs");
      table.add_row({total ? job.name : "", total ? device_cell(r) : "",
                     total ? "all" : std::to_string(r.pid),
                     total ? procs : telemetry::process_name(r.pid),
                     percent_cell(r.utilization_percent), format_bytes(r.memory_bytes),
                     format_bytes(r.bytes_copied), std::to_string(r.collective_calls),
                     std::to_string(r.allocations), std::to_string(r.errors)});
    }
  }
  out << "\nJobs (shared ledgers /dev/shm/xal-ledger-<uid>-<job>; xal's accounting of "
         "every process\nof each job; utilization: device time of its work on a "
         "partition over the last second):\n";
  table.print(out);
}

nlohmann::json render_jobs_json(const telemetry::Snapshot& snap) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const telemetry::JobLedger& job : snap.jobs) {
    nlohmann::json j = {{"name", job.name},
                        {"error", job.error.empty() ? nlohmann::json() : nlohmann::json(job.error)},
                        {"devices", nlohmann::json::array()}};
    for (const xal_ledger_row_t& r : job.rows) {
      if (r.pid == 0) {
        nlohmann::json dev = row_json(r);
        dev["uuid"] = tools::format_uuid(r.uuid);
        dev["name"] = r.device_name;
        dev["compute_percent"] = r.compute_percent;
        dev["limit_bytes"] = r.limit_bytes;
        dev["process_count"] = r.processes;
        dev["processes"] = nlohmann::json::array();
        j["devices"].push_back(std::move(dev));
      } else if (!j["devices"].empty()) {
        j["devices"].back()["processes"].push_back(row_json(r));
      }
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace xal::smi
