// How api_sequence.cpp chooses what a call gets: live, destroyed, forged
// and wrong-kind handles, and device ranges in, at the edge of or past an
// allocation.
#pragma once

#include <vector>

#include "api_model.hpp"

namespace xal::fuzz {

// What a step passes as a handle, and the live object it is (-1: none, the
// call must refuse it).
struct Pick {
  void* handle;
  int index;
};

// The status a refused handle gets.
inline xal_status_t refused(const Model& m) {
  return m.initialised ? XAL_ERROR_INVALID_HANDLE : XAL_ERROR_NOT_INITIALIZED;
}

// A live handle of `live` (pairs of handle and object index) most of the
// time, else a destroyed, NULL, forged or wrong-kind one.
inline Pick pick(Choices& in, const Model& m, const std::vector<Pick>& live,
                 const std::vector<Pick>& other_kinds) {
  static int local;
  const uint8_t c = in.byte() % 10;
  if (c < 6 && !live.empty()) return live[in.below(live.size())];
  if (c < 8 && !m.stale.empty()) return {m.stale[in.below(m.stale.size())], -1};
  if (c == 8 && !other_kinds.empty()) return {other_kinds[in.below(other_kinds.size())].handle, -1};
  if (c == 9 && !live.empty()) {  // a live handle with its generation bits changed
    const auto v = reinterpret_cast<uintptr_t>(live[in.below(live.size())].handle);
    return {reinterpret_cast<void*>(v ^ (1 + in.below(3))), -1};
  }
  void* const forged[] = {nullptr, reinterpret_cast<void*>(0x1000), &local,
                          reinterpret_cast<void*>(~uintptr_t{0} << 10)};
  return {forged[in.below(4)], -1};
}

inline std::vector<Pick> live_cards(const Model& m) {
  std::vector<Pick> out;
  if (m.initialised)
    for (size_t i = 0; i < m.cards.size(); ++i)
      if (m.cards[i].live) out.push_back({m.cards[i].handle, static_cast<int>(i)});
  return out;
}
inline std::vector<Pick> live_streams(const Model& m) {
  std::vector<Pick> out;
  for (size_t i = 0; i < m.streams.size(); ++i)
    if (m.streams[i].live) out.push_back({m.streams[i].handle, static_cast<int>(i)});
  return out;
}
inline std::vector<Pick> live_events(const Model& m) {
  std::vector<Pick> out;
  for (size_t i = 0; i < m.events.size(); ++i)
    if (m.events[i].live) out.push_back({m.events[i].handle, static_cast<int>(i)});
  return out;
}
inline std::vector<Pick> live_modules(const Model& m) {
  std::vector<Pick> out;
  for (size_t i = 0; i < m.modules.size(); ++i)
    if (m.modules[i].live) out.push_back({m.modules[i].handle, static_cast<int>(i)});
  return out;
}
inline std::vector<Pick> live_kernels(const Model& m) {
  std::vector<Pick> out;
  for (size_t i = 0; i < m.kernels.size(); ++i)
    if (m.modules[m.kernels[i].module].live)
      out.push_back({m.kernels[i].handle, static_cast<int>(i)});
  return out;
}
// Live communicators; a Pick's index is set * kRanksPerSet + rank.
inline constexpr size_t kRanksPerSet = 8;
inline std::vector<Pick> live_comms(const Model& m) {
  std::vector<Pick> out;
  for (size_t i = 0; i < m.comms.size(); ++i)
    for (size_t r = 0; r < m.comms[i].comms.size(); ++r)
      if (m.comms[i].live[r])
        out.push_back({m.comms[i].comms[r], static_cast<int>(i * kRanksPerSet + r)});
  return out;
}
inline Pick pick_card(Choices& in, const Model& m) {
  return pick(in, m, live_cards(m), live_streams(m));
}
inline Pick pick_stream(Choices& in, const Model& m) {
  return pick(in, m, live_streams(m), live_events(m));
}
inline Pick pick_event(Choices& in, const Model& m) {
  return pick(in, m, live_events(m), live_cards(m));
}
inline Pick pick_module(Choices& in, const Model& m) {
  return pick(in, m, live_modules(m), live_events(m));
}
inline Pick pick_kernel(Choices& in, const Model& m) {
  return pick(in, m, live_kernels(m), live_modules(m));
}

// A device range: mostly in a live allocation of `device`, else at the
// edge of or past one (live or freed, of any device), or anywhere.
struct Range {
  uint64_t ptr;
  uint64_t bytes;
};
inline Range pick_range(Choices& in, const Model& m, uint32_t device) {
  std::vector<const Alloc*> mine;
  for (const Alloc& a : m.allocs)
    if (a.live && a.device == device) mine.push_back(&a);
  // Choice 0 (what the input gives past its end) is an ordinary valid one.
  const uint8_t c = in.byte() % 8;
  if (m.allocs.empty() || c == 7) return {in.bits(8), in.below(4097)};
  const Alloc& a = !mine.empty() && c < 6 ? *mine[in.below(mine.size())]
                                          : m.allocs[in.below(m.allocs.size())];
  const uint64_t off = in.byte() % 2 ? 0 : in.below(a.size + 33);
  const uint64_t rest = off <= a.size ? a.size - off : 0;
  switch (in.byte() % 8) {
    case 0: case 1: return {a.ptr + off, 1 + in.below(std::min<uint64_t>(rest + 1, 4096))};
    case 2: case 3: return {a.ptr + off, rest};
    case 4: return {a.ptr + off, rest + 1};
    case 5: return {a.ptr + off, ~uint64_t{0} - in.below(3)};
    case 6: return {a.ptr - in.below(512), in.bits(2)};
    default: return {a.ptr + off, 0};
  }
}

}  // namespace xal::fuzz
