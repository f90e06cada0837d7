// The trace's chunked event store (core/src/trace_store.*), compiled in:
// order across chunk boundaries, moves between stores, the pool's cap and
// its chunks reused store after store, and the writer's stable sort over
// the chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "trace_store.hpp"
#include "trace_writer.hpp"

namespace {

using namespace xal::core::trace;
using nlohmann::json;

// An event whose fields all derive from `i`; every tenth has names long
// enough to live on the heap, so moves between chunks must carry them.
Event make_event(uint64_t i, int64_t ts) {
  Event e;
  e.pid = 7;
  e.tid = 1 + i % 3;
  e.ts = ts;
  e.dur = static_cast<int64_t>(i % 11);
  e.name = "xal_stream_synchronize";
  e.call = i + 1;
  if (i % 10 == 0) {
    e.owned_name = "launch a_kernel_with_a_long_name_" + std::to_string(i);
    e.detail = "a note long enough to be allocated, event " + std::to_string(i);
  }
  return e;
}

void expect_event(const Event& e, uint64_t i, int64_t ts) {
  EXPECT_EQ(e.call, i + 1);
  EXPECT_EQ(e.ts, ts);
  EXPECT_EQ(e.tid, 1 + i % 3);
  EXPECT_EQ(e.dur, static_cast<int64_t>(i % 11));
  if (i % 10 == 0) {
    EXPECT_EQ(e.owned_name, "launch a_kernel_with_a_long_name_" + std::to_string(i));
    EXPECT_EQ(e.detail, "a note long enough to be allocated, event " + std::to_string(i));
  } else {
    EXPECT_TRUE(e.owned_name.empty());
    EXPECT_TRUE(e.detail.empty());
  }
}

TEST(TraceStore, KeepsOrderAcrossChunkBoundaries) {
  ChunkPool pool(4);
  EventStore store(pool);
  const size_t n = 3 * kChunkEvents + 5;
  for (size_t i = 0; i < n; ++i) store.push_back(make_event(i, static_cast<int64_t>(i)));
  ASSERT_EQ(store.size(), n);
  EXPECT_EQ(store.chunks(), 4u);
  for (size_t i = 0; i < n; ++i) expect_event(store[i], i, static_cast<int64_t>(i));
  size_t i = 0;
  for (const Event& e : std::as_const(store)) EXPECT_EQ(e.call, ++i);
  EXPECT_EQ(i, n);
  EXPECT_EQ(store.end() - store.begin(), static_cast<std::ptrdiff_t>(n));
  // Exactly full chunks: the next event starts a new one.
  EventStore full(pool);
  for (size_t k = 0; k < 2 * kChunkEvents; ++k) full.push_back(make_event(k, 0));
  EXPECT_EQ(full.chunks(), 2u);
  full.push_back(make_event(9, 0));
  EXPECT_EQ(full.chunks(), 3u);
}

TEST(TraceStore, AppendMovesEveryEventInOrderAndEmptiesTheSource) {
  ChunkPool pool(64);
  EventStore a(pool), b(pool), merged(pool);
  const size_t na = 2 * kChunkEvents + kChunkEvents / 2, nb = kChunkEvents + 1;
  for (size_t i = 0; i < na; ++i) a.push_back(make_event(i, 1));
  for (size_t i = na; i < na + nb; ++i) b.push_back(make_event(i, 2));
  const size_t before = Chunk::mapped();
  merged.append_from(a);
  merged.append_from(b);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.chunks(), 0u);
  EXPECT_TRUE(b.empty());
  ASSERT_EQ(merged.size(), na + nb);
  for (size_t i = 0; i < na + nb; ++i) expect_event(merged[i], i, i < na ? 1 : 2);
  // Each source chunk went back to the pool once emptied: the merge mapped
  // no more than the merged store holds now.
  EXPECT_LE(Chunk::mapped(), before + 1);
  EXPECT_EQ(merged.chunks(), (na + nb + kChunkEvents - 1) / kChunkEvents);
  // The emptied stores take events again.
  a.push_back(make_event(5, 5));
  ASSERT_EQ(a.size(), 1u);
  expect_event(a[0], 5, 5);
}

TEST(TraceStore, PoolKeepsAtMostItsCapAndUnmapsTheRest) {
  const size_t base = Chunk::mapped();
  {
    ChunkPool pool(2);
    {
      EventStore store(pool);
      for (size_t i = 0; i < 5 * kChunkEvents; ++i) store.push_back(make_event(i, 0));
      EXPECT_EQ(store.chunks(), 5u);
      EXPECT_EQ(Chunk::mapped(), base + 5);
    }
    EXPECT_EQ(pool.free_chunks(), 2u);
    EXPECT_EQ(Chunk::mapped(), base + 2);
    ChunkPool none(0);
    {
      EventStore store(none);
      store.push_back(make_event(0, 0));
    }
    EXPECT_EQ(none.free_chunks(), 0u);
    EXPECT_EQ(Chunk::mapped(), base + 2);
  }
  EXPECT_EQ(Chunk::mapped(), base);
}

TEST(TraceStore, ChunksAreReusedSessionAfterSession) {
  const size_t base = Chunk::mapped();
  ChunkPool pool(4);
  EventStore thread_a(pool), thread_b(pool);
  std::set<const Event*> chunks_seen;
  auto note_chunks = [&](const EventStore& s) {
    for (size_t c = 0; c < s.chunks(); ++c) chunks_seen.insert(&s[c * kChunkEvents]);
  };
  for (int session = 0; session < 20; ++session) {
    // Two threads' events, merged, written and dropped as finish() does.
    for (size_t i = 0; i < 2 * kChunkEvents; ++i)
      thread_a.push_back(make_event(i, static_cast<int64_t>(i)));
    for (size_t i = 0; i < kChunkEvents / 2; ++i)
      thread_b.push_back(make_event(i, static_cast<int64_t>(i)));
    note_chunks(thread_a);
    note_chunks(thread_b);
    {
      EventStore merged(pool);
      merged.append_from(thread_a);
      merged.append_from(thread_b);
      note_chunks(merged);
      EXPECT_EQ(merged.size(), 2 * kChunkEvents + kChunkEvents / 2);
      EXPECT_EQ(Chunk::mapped(), base + 4) << "session " << session;
    }
    EXPECT_EQ(pool.free_chunks(), 4u);
  }
  // Four chunks served every session: none mapped after the first.
  EXPECT_EQ(chunks_seen.size(), 4u);
  EXPECT_EQ(Chunk::mapped(), base + 4);
}

// The writer sorts by time and keeps the given order of events of the same
// time, over several chunks, as std::stable_sort on one vector does.
TEST(TraceStore, WriterSortsStablyAcrossChunks) {
  ChunkPool pool(8);
  EventStore store(pool);
  std::vector<std::pair<int64_t, uint64_t>> want;  // ts, call
  const size_t n = 4 * kChunkEvents + 17;
  for (size_t i = 0; i < n; ++i) {
    const int64_t ts = static_cast<int64_t>((n - i) / 50 * 1000);  // runs of equal times, falling
    store.push_back(make_event(i, ts));
    want.emplace_back(ts, i + 1);
  }
  std::stable_sort(want.begin(), want.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Meta meta;
  meta.host_pid = 7;
  meta.processes[7] = "xal host (pid 7)";
  std::ostringstream out;
  ASSERT_TRUE(write_chrome_trace(out, meta, store));
  const json t = json::parse(out.str());
  std::vector<std::pair<int64_t, uint64_t>> got;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "M") continue;
    got.emplace_back(static_cast<int64_t>(e["ts"].get<double>() * 1000.0 + 0.5),
                     e["args"]["call"].get<uint64_t>());
    const uint64_t i = got.back().second - 1;
    if (i % 10 == 0) {
      EXPECT_EQ(e["name"], "launch a_kernel_with_a_long_name_" + std::to_string(i));
      EXPECT_EQ(e["args"]["note"],
                "a note long enough to be allocated, event " + std::to_string(i));
    } else {
      EXPECT_EQ(e["name"], "xal_stream_synchronize");
    }
  }
  EXPECT_EQ(got, want);
  // Sorted in place.
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(store[i].call, want[i].second);
}

}  // namespace
