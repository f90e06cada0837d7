// The shadow model of the API-sequence target (api_sequence.cpp): what a
// sequence of public calls on two mock cards has created, and what each
// call must return. Device memory is modelled byte by byte (for
// allocations up to kTracked bytes) with which bytes are known, so that
// every read back is compared with what was written.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "xal/xal.h"

namespace xal::fuzz {

// The cards: two mock L4 of 64 MiB (XAL_MOCK_DEVICES, set by the target).
inline constexpr uint32_t kDevices = 2;
inline constexpr uint64_t kCardBytes = 64ull << 20;
// Allocations up to this size have their bytes modelled.
inline constexpr uint64_t kTracked = 1ull << 20;
// Live objects at most (beyond, creation steps are skipped).
inline constexpr size_t kMaxLive = 24;

// Reads the input as a stream of choices; past its end every read is 0.
class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint64_t bits(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = v << 8 | byte();
    return v;
  }
  // A value in [0, n) (n > 0).
  uint64_t below(uint64_t n) { return bits(n <= 256 ? 1 : n <= 65536 ? 2 : 8) % n; }
  // The next byte, not consumed (0 past the end).
  uint8_t peek() const { return pos_ < size_ ? data_[pos_] : 0; }
  // The next `n` bytes (fewer at the end) as choices of their own.
  Choices take(size_t n) {
    const size_t k = std::min(n, size_ - std::min(pos_, size_));
    Choices part(data_ + pos_, k);
    pos_ += k;
    return part;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

struct Alloc {
  uint32_t device;
  xal_devptr_t ptr;
  uint64_t size;
  bool live = true;
  int pending = -1;            // stream with queued work on it, -1: none
  std::vector<uint8_t> bytes;  // the modelled content (size <= kTracked)
  std::vector<uint8_t> known;  // 1 where the content is known
  bool imported = false;       // xal_mem_import of host memory: no quota
  bool tracked() const { return !bytes.empty(); }
};

struct Stream {
  uint32_t device;
  xal_stream_t handle;
  bool live = true;
  std::vector<std::vector<uint8_t>> staged;  // sources of queued htod copies
  bool imported = false;  // a wrapper of another's native stream (xal_stream_import)
  uint64_t native = 0;    // the native stream (xal_handle_get_native), 0: not asked
};

struct Event {
  uint32_t device;
  xal_event_t handle;
  bool live = true;
};

// A device: one of the two mock cards, or a partition of one. Objects name
// their device by its slot in Model::cards, which never moves (xal's global
// indices of partitions do move down when an earlier card is unpartitioned).
struct Card {
  xal_device_t handle = nullptr;
  int parent = -1;              // the slot of a partition's card; -1: a whole card
  bool live = true;             // a partition not yet undone
  bool partitioned = false;     // a card split into partitions
  uint64_t bytes = kCardBytes;  // its memory (a partition's quota)
  uint64_t used = 0;            // bytes of live allocations
  uint64_t limit = 0;           // quota, 0: none (a partition: its bytes)
  bool partition() const { return parent >= 0; }
};

struct Module {
  uint32_t device;
  xal_module_t handle;
  bool live = true;
  std::vector<std::string> kernels;  // the built-ins its image lists
};

struct Kernel {
  size_t module;  // index in Model::modules; the kernel lives as long as it
  xal_kernel_t handle;
  std::string name;
};

// The communicators made by one xal_comm_create: rank i on devices[i].
struct CommSet {
  std::vector<uint32_t> devices;
  std::vector<xal_comm_t> comms;
  std::vector<bool> live;  // per rank: not yet destroyed
  bool aborted = false;    // a reset of one of its devices aborted it
  bool whole() const { return std::all_of(live.begin(), live.end(), [](bool b) { return b; }); }
};

// The state of the sequence so far.
struct Model {
  bool initialised = false;
  std::vector<Card> cards;
  std::vector<Alloc> allocs;
  std::vector<Stream> streams;
  std::vector<Event> events;
  std::vector<Module> modules;
  std::vector<Kernel> kernels;
  std::vector<CommSet> comms;
  std::vector<void*> stale;  // handles of every kind that are no longer live
  // Host memory of imports and registrations: kept until the sequence ends
  // (an import's memory must outlive it, as its owner's would).
  std::vector<std::unique_ptr<std::vector<uint8_t>>> host;
  std::vector<std::pair<const uint8_t*, uint64_t>> registered;  // xal_host_register

  // xal's global index of the device in `slot`: the cards, then the live
  // partitions in the order they were made.
  uint32_t global_index(size_t slot) const {
    if (!cards[slot].partition()) return static_cast<uint32_t>(slot);
    uint32_t i = kDevices;
    for (size_t k = kDevices; k < slot; ++k) i += cards[k].live;
    return i;
  }
  uint32_t device_count() const {
    uint32_t n = 0;
    for (const Card& c : cards) n += c.live;
    return n;
  }
  // The slot of the card itself (a partition's parent, else `slot`).
  uint32_t card_of(uint32_t slot) const {
    return cards[slot].partition() ? static_cast<uint32_t>(cards[slot].parent) : slot;
  }
  // Bytes allocated from the card of `slot` (by it and its partitions).
  uint64_t card_used(uint32_t slot) const {
    const uint32_t card = card_of(slot);
    uint64_t used = 0;
    for (size_t k = 0; k < cards.size(); ++k)
      if (cards[k].live && card_of(static_cast<uint32_t>(k)) == card) used += cards[k].used;
    return used;
  }
  size_t live_allocs() const {
    return static_cast<size_t>(std::count_if(allocs.begin(), allocs.end(),
                                             [](const Alloc& a) { return a.live; }));
  }
  // The live allocation of `device` that holds [ptr, ptr + bytes), if any.
  Alloc* holding(uint32_t device, uint64_t ptr, uint64_t bytes) {
    for (Alloc& a : allocs)
      if (a.live && a.device == device && ptr >= a.ptr && ptr - a.ptr <= a.size &&
          bytes <= a.size - (ptr - a.ptr))
        return &a;
    return nullptr;
  }
};

// In fault mode (fault:mock with a plan, api_faults.cpp) a call may fail
// with an injected error instead of what the model says: true when the
// fault backend has counted an injection since the last call of this.
bool injected_since_last_check();
// Turns that check on (from the injections counted now) or off: off while
// xal is not initialised, and around calls that must not be excused.
void fault_watch(bool on);

// Stops with both statuses and the error detail when `got` is not `want`
// (and no fault was injected since the previous check).
inline void expect(xal_status_t got, xal_status_t want, const std::string& call) {
  const bool injected = injected_since_last_check();
  // XAL_FUZZ_TRACE=1: every checked call and its status on stderr.
  static const bool trace = std::getenv("XAL_FUZZ_TRACE") != nullptr;
  if (trace)
    std::fprintf(stderr, "  %s -> %s%s\n", call.c_str(), xal_status_name(got),
                 injected ? " (a fault was injected)" : "");
  if (got == want || (injected && got != XAL_SUCCESS)) return;
  xal_error_info_t info{};
  info.struct_size = sizeof info;
  xal_last_error(&info);
  check_failed("got == want",
               call + ": returned " + xal_status_name(got) + ", the model expected " +
                   xal_status_name(want) + " (last error: " + info.message + ")",
               __FILE__, __LINE__);
}

// A failing call leaves its status in the thread's error detail.
inline void expect_detail(xal_status_t got, const std::string& call) {
  if (got == XAL_SUCCESS || got == XAL_NOT_READY) return;
  xal_error_info_t info{};
  info.struct_size = sizeof info;
  XAL_FUZZ_CHECK(xal_last_error(&info) == XAL_SUCCESS, call + ": xal_last_error failed");
  XAL_FUZZ_CHECK(info.status == got, call + ": the error detail has " +
                                         xal_status_name(info.status) + ", the call returned " +
                                         xal_status_name(got));
  XAL_FUZZ_CHECK(says_something(info.message), call + ": an error detail without a message");
}

}  // namespace xal::fuzz
