// Chrome trace JSON ("JSON object format"), written one event at a time so
// that a large trace is never held twice in memory.
#include "trace_writer.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "trace_store.hpp"
#include "xal_common/reduce.hpp"

namespace xal::core::trace {
namespace {

using nlohmann::json;

// Nanoseconds since the base as the format's microseconds.
double micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json metadata(const char* name, uint64_t pid, uint64_t tid, json args) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid},
          {"args", std::move(args)}};
}

json args_of(const Event& e) {
  json a = json::object();
  if (e.call) a["call"] = e.call;
  if (e.status != kNoStatus) a["status"] = xal_status_name(e.status);
  if (e.device >= 0) a["device"] = e.device;
  if (e.stream >= 0) a["stream"] = e.stream;
  if (e.args.bytes) a["bytes"] = e.args.bytes;
  if (e.args.count) a["count"] = e.args.count;
  if (e.args.dtype >= 0) a["dtype"] = xal::common::dtype_name(e.args.dtype);
  if (e.args.op >= 0) a["op"] = xal::common::op_name(e.args.op);
  if (e.args.peer >= 0) a["peer_device"] = e.args.peer;
  if (!e.detail.empty()) a[e.status != kNoStatus ? "error" : "note"] = e.detail;
  return a;
}

json event_json(const Event& e, int64_t base) {
  json j = {{"ph", std::string(1, e.ph)}, {"name", e.owned_name.empty() ? e.name : e.owned_name},
            {"pid", e.pid},  {"tid", e.tid},
            {"ts", micros(e.ts - base)}};
  if (e.ph == 'X') {
    j["dur"] = micros(std::max<int64_t>(e.dur, 0));
    j["cat"] = e.pid >= kDevicePidBase ? "device" : "api";
    j["args"] = args_of(e);
  } else {
    j["cat"] = "flow";
    j["id"] = e.id;
    if (e.ph == 'f') j["bp"] = "e";
  }
  return j;
}

}  // namespace

bool write_chrome_trace(std::ostream& out, const Meta& meta, EventStore& events) {
  // A stable sort by time: std::stable_sort would take a buffer of half the
  // events from the heap.
  for (size_t i = 0; i < events.size(); ++i) events[i].order = i;
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.order < b.order;
  });
  const char* sep = "\n";
  auto put = [&](const json& j) {
    out << sep << dump(j);
    sep = ",\n";
  };
  out << "{\"traceEvents\":[";
  for (const auto& [pid, name] : meta.processes) {
    put(metadata("process_name", pid, 0, {{"name", name}}));
    put(metadata("process_sort_index", pid, 0,
                 {{"sort_index", pid >= kDevicePidBase ? pid - kDevicePidBase + 1 : 0}}));
  }
  for (const auto& [key, name] : meta.threads) {
    put(metadata("thread_name", key.first, key.second, {{"name", name}}));
    if (key.first >= kDevicePidBase)
      put(metadata("thread_sort_index", key.first, key.second,
                   {{"sort_index", key.second}}));
  }
  for (const Event& e : events) put(event_json(e, meta.base));
  if (meta.dropped)
    put(metadata("xal_dropped_events", meta.host_pid, 0,
                 {{"dropped", meta.dropped},
                  {"max_events", meta.max_events},
                  {"message", "dropped " + std::to_string(meta.dropped) +
                                  " events: XAL_TRACE_MAX_EVENTS (" +
                                  std::to_string(meta.max_events) +
                                  ") was reached"}}));
  out << "\n],\"displayTimeUnit\":\"ms\",\"otherData\":"
      << dump({{"producer", "xal"},
               {"dropped_events", meta.dropped},
               {"max_events", meta.max_events}})
      << "}\n";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace xal::core::trace
