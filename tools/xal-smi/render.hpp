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

// The current local time as "Wed Dec  2 15:04:05 2026" and as ISO 8601 UTC.
std::string local_time_text();
std::string utc_time_iso();

}  // namespace xal::smi
