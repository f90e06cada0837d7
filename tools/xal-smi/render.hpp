// xal-smi's two views of a Snapshot: a table for people and JSON for
// scripts. Pure functions of the snapshot; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "snapshot.hpp"

namespace xal::smi {

// The table: header (ABI, time, backends), one row per device with its
// live metrics ("N/A" for fields the backend did not fill), xal's counters
// of this process, and notes.
void render_text(const telemetry::Snapshot& snap, const std::string& when,
                 std::ostream& out);

// Every field, with `valid` decoded; fields whose bit is not set are null.
nlohmann::json render_json(const telemetry::Snapshot& snap,
                           const std::string& when);

// The jobs' shared ledgers (snap.jobs): a table of each job's devices and
// processes, nothing when there is no ledger; and the same as JSON (an
// array of {name, error, devices: [{uuid, name, ..., processes: [...]}]}).
void render_jobs_text(const telemetry::Snapshot& snap, std::ostream& out);
nlohmann::json render_jobs_json(const telemetry::Snapshot& snap);

// The current local time as "Wed Dec  2 15:04:05 2026" and as ISO 8601 UTC.
std::string local_time_text();
std::string utc_time_iso();

}  // namespace xal::smi
