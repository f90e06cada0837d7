// Reading the jobs' shared ledgers (see ledgers.hpp).
#include "ledgers.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace xal::telemetry {

std::vector<std::string> ledger_names(const std::string& dir) {
  const std::string prefix = "xal-ledger-" + std::to_string(::getuid()) + "-";
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string file = e->d_name;
    if (file.size() > prefix.size() && file.compare(0, prefix.size(), prefix) == 0)
      names.push_back(file.substr(prefix.size()));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// A device where the job holds no memory and did nothing: only limits (a
// partition's size is the limit of every process that made it).
bool idle_job_row(const xal_ledger_row_t& r) {
  return r.memory_bytes == 0 && r.busy_ns == 0 && r.bytes_copied == 0 &&
         r.collective_calls == 0 && r.allocations == 0 && r.errors == 0 &&
         r.compute_percent == 0;
}

// Leaves out the devices of idle_job_row, job row and process rows alike.
void drop_idle_devices(std::vector<xal_ledger_row_t>* rows) {
  std::vector<xal_ledger_row_t> kept;
  bool keep = false;
  for (const xal_ledger_row_t& r : *rows) {
    if (r.pid == 0) keep = !idle_job_row(r);
    if (keep) kept.push_back(r);
  }
  rows->swap(kept);
}

}  // namespace

std::vector<JobLedger> read_job_ledgers(const std::string& dir) {
  std::vector<JobLedger> jobs;
  for (const std::string& name : ledger_names(dir)) {
    JobLedger job;
    job.name = name;
    uint32_t count = 0;
    xal_status_t s = xal_ledger_read(name.c_str(), 0, nullptr, &count);
    // Rows may come and go between the two calls: room for a few more.
    for (int tries = 0; s == XAL_SUCCESS && tries < 3; ++tries) {
      job.rows.assign(count + 16, xal_ledger_row_t{});
      for (auto& r : job.rows) r.struct_size = sizeof r;
      s = xal_ledger_read(name.c_str(), static_cast<uint32_t>(job.rows.size()),
                          job.rows.data(), &count);
      if (s == XAL_SUCCESS && count <= job.rows.size()) break;
    }
    if (s != XAL_SUCCESS) {
      xal_error_info_t e{};
      e.struct_size = sizeof e;
      xal_last_error(&e);
      job.error = std::string(xal_status_name(s)) + ": " + e.message;
      job.rows.clear();
    } else {
      job.rows.resize(std::min<size_t>(count, job.rows.size()));
      drop_idle_devices(&job.rows);
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::string process_name(int32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

}  // namespace xal::telemetry
