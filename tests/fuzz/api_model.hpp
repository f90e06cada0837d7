// The shadow model of the API-sequence target (api_sequence.cpp): what a
// sequence of public calls on two mock cards has created, and what each
// call must return. Device memory is modelled byte by byte (for
// allocations up to kTracked bytes) with which bytes are known, so that
// every read back is compared with what was written.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
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
  bool tracked() const { return !bytes.empty(); }
};

struct Stream {
  uint32_t device;
  xal_stream_t handle;
  bool live = true;
  std::vector<std::vector<uint8_t>> staged;  // sources of queued htod copies
};

struct Event {
  uint32_t device;
  xal_event_t handle;
  bool live = true;
};

struct Card {
  xal_device_t handle = nullptr;
  uint64_t used = 0;   // bytes of live allocations
  uint64_t limit = 0;  // quota, 0: none
};

// The state of the sequence so far.
struct Model {
  bool initialised = false;
  Card cards[kDevices];
  std::vector<Alloc> allocs;
  std::vector<Stream> streams;
  std::vector<Event> events;
  std::vector<void*> stale;  // handles of every kind that are no longer live

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

// Stops with both statuses and the error detail when `got` is not `want`.
inline void expect(xal_status_t got, xal_status_t want, const std::string& call) {
  if (got == want) return;
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
