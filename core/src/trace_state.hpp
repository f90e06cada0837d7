// The state of a trace session shared by trace.cpp (calls, operations) and
// trace_session.cpp (start, merge and write). Internal to the core.
#pragma once

#include <atomic>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trace_store.hpp"
#include "trace_writer.hpp"

namespace xal::core::trace {

inline constexpr uint64_t kDefaultMaxEvents = 2'000'000;

// Events of one thread; kept by the tracer after the thread exits.
struct Buffer {
  explicit Buffer(ChunkPool& pool) noexcept : events(pool) {}
  std::mutex mu;
  EventStore events;  // in chunks of the tracer's pool
  uint64_t tid = 0;
};

// One stream's track. Its host functions run in stream order; last_end is
// the completion time of the stream's previous traced operation.
struct Track {
  uint64_t id = 0;
  uint32_t device = 0;
  std::mutex mu;
  int64_t last_end = 0;
};

// A device operation waiting for its host function.
struct PendingOp {
  uint64_t session = 0;
  std::shared_ptr<Track> track;
  StreamObj* stream = nullptr;
  int64_t submit = 0;
  const char* name = "";  // a string literal
  std::string owned_name;
  OpArgs args;
  uint64_t call = 0;
  uint64_t flow = 0;
};

struct Tracer {
  ChunkPool pool{kPoolChunks};  // thread-safe; the chunks of every store
  std::mutex mu;  // guards everything below but the atomics and the pool
  std::atomic<uint64_t> session{0};
  std::atomic<uint64_t> pid{0};  // the process's, taken at start
  std::ofstream file;
  std::string path;
  int64_t base = 0;
  std::atomic<uint64_t> max_events{kDefaultMaxEvents};
  std::atomic<uint64_t> count{0}, dropped{0}, next_call{0}, next_flow{0};
  uint64_t next_stream = 0;
  std::vector<std::shared_ptr<Buffer>> buffers;
  std::unordered_map<const StreamObj*, std::shared_ptr<Track>> tracks;
  std::map<uint32_t, std::string> devices;
  std::set<std::pair<uint32_t, uint64_t>> stream_names;  // device, id
  bool atexit_registered = false;
  bool atfork_registered = false;
};

// The process's tracer (made on first use).
Tracer& tracer();
// This thread's buffer, registered with the tracer on first use.
Buffer* buffer();
// Stores `e` in this thread's buffer, or counts it dropped past the cap.
void emit(Event&& e) noexcept;
uint64_t host_pid();

}  // namespace xal::core::trace
