// xal-bench dispatch: a cheap call (xal_event_query on a completed event,
// xal_stream_query on an idle stream) through the public ABI against the
// same call straight through the backend's table (xal_handle_get_native),
// with validation on and off.
//
// Each "xal" case also times the public and the direct call itself, in
// alternating rounds, on the thread's CPU clock (so that other processes on
// a loaded machine do not count), keeping each one's best round, and
// reports the counters public_ns, direct_ns and added_ns (public - direct,
// per call). The rounds run once per reported run (RoundsCache), not on
// every call Google Benchmark makes while it settles the iteration count;
// the cases share the process's xal session (Session).
#include <string>

#include "session.hpp"
#include "subcommands.hpp"
#include "xal/xal_backend.h"

namespace xal::bench {
namespace {

constexpr int64_t kCallsPerRound = 200000;
constexpr int kRounds = 7;

enum class Call { kEventQuery, kStreamQuery };
enum class Path { kPublic, kDirect };

// The objects a case calls on, made on device 0.
struct Target {
  xal_stream_t stream = nullptr;
  xal_event_t event = nullptr;
  const xal_backend_table_t* table = nullptr;
  void* native = nullptr;  // xal_bevent_t* or xal_bstream_t*

  Target() = default;
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;
  ~Target() {
    if (event != nullptr) {
      xal_event_destroy(event);
    }
    if (stream != nullptr) {
      xal_stream_destroy(stream);
    }
  }
};

bool prepare(benchmark::State& state, const Session& session, Call call,
             Target& t) {
  if (!ok(state, xal_stream_create(session.device(), XAL_STREAM_DEFAULT,
                                   &t.stream),
          "xal_stream_create")) {
    return false;
  }
  if (call == Call::kEventQuery) {
    if (!ok(state, xal_event_create(session.device(), XAL_EVENT_DEFAULT,
                                    &t.event),
            "xal_event_create") ||
        !ok(state, xal_event_record(t.event, t.stream), "xal_event_record") ||
        !ok(state, xal_event_synchronize(t.event), "xal_event_synchronize")) {
      return false;
    }
  } else if (!ok(state, xal_stream_synchronize(t.stream),
                 "xal_stream_synchronize")) {
    return false;
  }
  const void* handle = call == Call::kEventQuery
                           ? static_cast<const void*>(t.event)
                           : static_cast<const void*>(t.stream);
  if (!ok(state, xal_handle_get_native(handle, &t.table, &t.native),
          "xal_handle_get_native")) {
    return false;
  }
  const bool has_entry = call == Call::kEventQuery
                             ? t.table->event_query != nullptr
                             : t.table->stream_query != nullptr;
  if (!has_entry) {
    fail(state, "the backend's table has no query entry");
    return false;
  }
  return true;
}

// The figures of the xal cases' rounds, per case.
RoundsCache& rounds() {
  static RoundsCache cache;
  return cache;
}

void run_case(benchmark::State& state, const std::string& name, Call call,
              Path path, int validation) {
  const Session* session = Session::acquire(state, validation);
  if (session == nullptr) {
    return;
  }
  Target t;
  if (!prepare(state, *session, call, t)) {
    return;
  }
  auto* bevent = static_cast<xal_bevent_t*>(t.native);
  auto* bstream = static_cast<xal_bstream_t*>(t.native);
  const xal_backend_table_t* table = t.table;
  xal_event_t event = t.event;
  xal_stream_t stream = t.stream;

  auto public_call = [&] {
    return call == Call::kEventQuery ? xal_event_query(event)
                                     : xal_stream_query(stream);
  };
  auto direct_call = [&] {
    return call == Call::kEventQuery ? table->event_query(bevent)
                                     : table->stream_query(bstream);
  };
  if (public_call() != XAL_SUCCESS || direct_call() != XAL_SUCCESS) {
    fail(state, "the query did not return XAL_SUCCESS on idle work");
    return;
  }

  if (path == Path::kPublic) {
    for (auto _ : state) {
      benchmark::DoNotOptimize(public_call());
    }
    rounds().apply(state, name, [&](benchmark::UserCounters* counters) {
      const PairTiming pair = time_pair<ThreadCpuClock>(
          [&] { benchmark::DoNotOptimize(public_call()); },
          [&] { benchmark::DoNotOptimize(direct_call()); }, kCallsPerRound,
          kRounds);
      *counters = {{"public_ns", pair.a_ns},
                   {"direct_ns", pair.b_ns},
                   {"added_ns", pair.a_ns - pair.b_ns}};
      return true;
    });
  } else {
    for (auto _ : state) {
      benchmark::DoNotOptimize(direct_call());
    }
  }
}

void register_case(const char* call_name, Call call, Path path,
                   int validation) {
  const std::string name = std::string("dispatch/") + call_name + "/" +
                           (path == Path::kPublic ? "xal" : "direct") +
                           "/validation:" + (validation != 0 ? "on" : "off");
  benchmark::RegisterBenchmark(
      name.c_str(), [name, call, path, validation](benchmark::State& state) {
        run_case(state, name, call, path, validation);
      });
}

}  // namespace

void register_dispatch_benchmarks() {
  for (int validation : {1, 0}) {
    for (Path path : {Path::kDirect, Path::kPublic}) {
      register_case("event_query", Call::kEventQuery, path, validation);
      register_case("stream_query", Call::kStreamQuery, path, validation);
    }
  }
}

}  // namespace xal::bench
