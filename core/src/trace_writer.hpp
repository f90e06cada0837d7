// The recorded form of trace events and the Chrome trace JSON writer.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <utility>

#include "trace.hpp"

namespace xal::core::trace {

inline constexpr int32_t kNoStatus = INT32_MIN;
// Device d is the trace "process" kDevicePidBase + d (above any Linux pid).
inline constexpr uint64_t kDevicePidBase = uint64_t{1} << 30;

// One event as recorded (times in steady-clock nanoseconds).
struct Event {
  char ph = 'X';  // X: complete, s / f: flow start / end
  uint64_t pid = 0;
  uint64_t tid = 0;
  int64_t ts = 0;
  int64_t dur = 0;
  const char* name = "";   // a string literal
  std::string owned_name;  // used instead when not empty (launches)
  uint64_t id = 0;    // flow id (s / f)
  uint64_t call = 0;  // the API call the event belongs to (0: none)
  int32_t status = kNoStatus;
  int64_t device = -1;
  int64_t stream = -1;
  OpArgs args;
  std::string detail;  // error message, or a note on the event
  uint64_t order = 0;  // set by the writer: the position before sorting
};

class EventStore;  // trace_store.hpp

// Names of the tracks and what was lost, for the metadata events.
struct Meta {
  uint64_t host_pid = 0;
  int64_t base = 0;  // steady-clock time of ts 0
  std::map<uint64_t, std::string> processes;                      // pid
  std::map<std::pair<uint64_t, uint64_t>, std::string> threads;  // pid, tid
  uint64_t dropped = 0;
  uint64_t max_events = 0;
};

// Writes {"traceEvents":[...],"displayTimeUnit":"ms"}: metadata events
// first, then `events` sorted by time, those of the same time in the order
// given (sorted in place, with no buffer besides the store's chunks).
// Returns false when the stream failed. Not thread-safe (the caller owns
// the events).
bool write_chrome_trace(std::ostream& out, const Meta& meta, EventStore& events);

}  // namespace xal::core::trace
