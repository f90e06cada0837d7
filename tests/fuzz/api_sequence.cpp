// Sequences of public ABI calls on two mock cards, decoded from the input:
// init and shutdown (again and again), device queries, allocations of any
// size (0, huge, past the card), frees, copies and memsets at any offset
// and length, peer copies, streams and events, limits and resets, with
// handles chosen from live, destroyed and forged ones. Every status is
// checked against the shadow model (api_model.hpp) and the documented
// statuses of xal.h, and every byte read back against the model.
#include <cstdlib>

#include "api_model.hpp"

#ifndef XAL_FUZZ_MOCK_PLUGIN
#error "XAL_FUZZ_MOCK_PLUGIN (the mock plugin's path) must be defined"
#endif

namespace {

using namespace xal::fuzz;

// What a step passes as a handle, and the live object it is (-1: none, the
// call must refuse it).
struct Pick {
  void* handle;
  int index;
};

// The status a refused handle gets.
xal_status_t refused(const Model& m) {
  return m.initialised ? XAL_ERROR_INVALID_HANDLE : XAL_ERROR_NOT_INITIALIZED;
}

// A live handle of `live` (pairs of handle and object index) most of the
// time, else a destroyed, NULL, forged or wrong-kind one.
Pick pick(Choices& in, const Model& m, const std::vector<Pick>& live,
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

std::vector<Pick> live_cards(const Model& m) {
  std::vector<Pick> out;
  if (m.initialised)
    for (uint32_t i = 0; i < kDevices; ++i) out.push_back({m.cards[i].handle, static_cast<int>(i)});
  return out;
}
std::vector<Pick> live_streams(const Model& m) {
  std::vector<Pick> out;
  for (size_t i = 0; i < m.streams.size(); ++i)
    if (m.streams[i].live) out.push_back({m.streams[i].handle, static_cast<int>(i)});
  return out;
}
std::vector<Pick> live_events(const Model& m) {
  std::vector<Pick> out;
  for (size_t i = 0; i < m.events.size(); ++i)
    if (m.events[i].live) out.push_back({m.events[i].handle, static_cast<int>(i)});
  return out;
}
Pick pick_card(Choices& in, const Model& m) {
  return pick(in, m, live_cards(m), live_streams(m));
}
Pick pick_stream(Choices& in, const Model& m) {
  return pick(in, m, live_streams(m), live_events(m));
}
Pick pick_event(Choices& in, const Model& m) {
  return pick(in, m, live_events(m), live_cards(m));
}

// A device range: mostly in a live allocation of `device`, else at the
// edge of or past one (live or freed, of any device), or anywhere.
struct Range {
  uint64_t ptr;
  uint64_t bytes;
};
Range pick_range(Choices& in, const Model& m, uint32_t device) {
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

// The input is a list of steps of kStepBytes bytes each: the operation,
// then its choices (past the step's end every choice is 0, an ordinary
// valid one), so that a mutation of one step leaves the others as they were.
constexpr size_t kStepBytes = 32;

class Sequence {
 public:
  ~Sequence() {
    if (m_.initialised) expect(xal_shutdown(), XAL_SUCCESS, "xal_shutdown at the end");
  }
  void run(Choices& input) {
    Choices none(nullptr, 0);
    in_ = &none;
    init();
    for (int steps = 0; steps < 200 && !input.done(); ++steps) {
      Choices choices = input.take(kStepBytes);
      in_ = &choices;
      step(choices.byte() % 20);
    }
  }

 private:
  void step(uint8_t op) {
    switch (op) {
      case 0: init(); break;
      case 1: shutdown(); break;
      case 2: device_queries(); break;
      case 3: case 4: mem_alloc(); break;
      case 5: mem_free(); break;
      case 6: case 7: write(); break;
      case 8: read(); break;
      case 9: dtod(); break;
      case 10: peer(); break;
      case 11: stream_create(); break;
      case 12: stream_destroy(); break;
      case 13: stream_wait(); break;
      case 14: event_create(); break;
      case 15: event_destroy(); break;
      case 16: event_use(); break;
      case 17: limits(); break;
      case 18: device_sync(); break;
      default: reset(); break;
    }
  }

  // --- init, shutdown, devices --------------------------------------------
  void init() {
    xal_init_options_t o{};
    o.struct_size = sizeof o;
    o.backends = XAL_FUZZ_MOCK_PLUGIN;
    o.validation = 1;
    const xal_status_t s = xal_init(&o);
    expect(s, m_.initialised ? XAL_ERROR_INVALID_ARGUMENT : XAL_SUCCESS, "xal_init");
    expect_detail(s, "xal_init");
    if (m_.initialised) return;
    m_.initialised = true;
    uint32_t n = 0;
    expect(xal_device_count(&n), XAL_SUCCESS, "xal_device_count");
    XAL_FUZZ_CHECK(n == kDevices, "xal_device_count gave " + std::to_string(n));
    for (uint32_t i = 0; i < kDevices; ++i) {
      m_.cards[i] = Card{};
      expect(xal_device_get(i, &m_.cards[i].handle), XAL_SUCCESS, "xal_device_get");
    }
    // A stream per card to start with.
    for (uint32_t i = 0; i < kDevices; ++i) {
      xal_stream_t st = nullptr;
      expect(xal_stream_create(m_.cards[i].handle, XAL_STREAM_DEFAULT, &st), XAL_SUCCESS,
             "xal_stream_create");
      m_.streams.push_back({i, st});
    }
  }

  void shutdown() {
    const xal_status_t s = xal_shutdown();
    expect(s, m_.initialised ? XAL_SUCCESS : XAL_ERROR_NOT_INITIALIZED, "xal_shutdown");
    expect_detail(s, "xal_shutdown");
    if (!m_.initialised) return;
    m_.initialised = false;
    for (const Card& c : m_.cards) retire(c.handle);
    for (Alloc& a : m_.allocs) a.live = false;
    for (Stream& st : m_.streams) forget(st);
    for (Event& e : m_.events) forget(e);
  }

  void device_queries() {
    const uint32_t index = static_cast<uint32_t>(in_->below(4));
    xal_device_t d = nullptr;
    const xal_status_t g = xal_device_get(index, &d);
    expect(g, !m_.initialised ? XAL_ERROR_NOT_INITIALIZED
              : index < kDevices ? XAL_SUCCESS : XAL_ERROR_INVALID_ARGUMENT,
           "xal_device_get");
    const Pick p = pick_card(*in_, m_);
    xal_device_properties_t props{};
    const bool too_small = in_->byte() % 4 == 0;  // a struct_size below every version
    props.struct_size = too_small ? 4 : sizeof props;
    const xal_status_t s = xal_device_get_properties(static_cast<xal_device_t>(p.handle), &props);
    const xal_status_t want = p.index < 0 ? refused(m_)
                              : too_small ? XAL_ERROR_INVALID_ARGUMENT : XAL_SUCCESS;
    expect(s, want, "xal_device_get_properties");
    expect_detail(s, "xal_device_get_properties");
    if (s == XAL_SUCCESS)
      XAL_FUZZ_CHECK(props.memory_bytes == kCardBytes, "a card of another size");
  }

  void device_sync() {
    const Pick p = pick_card(*in_, m_);
    const xal_status_t s = xal_device_synchronize(static_cast<xal_device_t>(p.handle));
    expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_device_synchronize");
    if (s == XAL_SUCCESS)
      for (size_t i = 0; i < m_.streams.size(); ++i)
        if (m_.streams[i].live && m_.streams[i].device == static_cast<uint32_t>(p.index))
          synced(i);
  }

  // Reset: every allocation, stream and event of the card goes.
  void reset() {
    device_sync_all();
    const Pick p = pick_card(*in_, m_);
    const xal_status_t s = xal_device_reset(static_cast<xal_device_t>(p.handle));
    expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_device_reset");
    if (s != XAL_SUCCESS) return;
    const auto dev = static_cast<uint32_t>(p.index);
    for (Alloc& a : m_.allocs)
      if (a.device == dev) a.live = false;
    for (Stream& st : m_.streams)
      if (st.device == dev) forget(st);
    for (Event& e : m_.events)
      if (e.device == dev) forget(e);
    m_.cards[dev].used = 0;
  }

  void limits() {
    const Pick p = pick_card(*in_, m_);
    const uint64_t used = p.index < 0 ? 0 : m_.cards[p.index].used;
    uint64_t limit = 0;
    switch (in_->byte() % 6) {
      case 0: limit = 0; break;
      case 1: limit = used; break;
      case 2: limit = used ? used - 1 : 0; break;
      case 3: limit = used + in_->bits(3) % kCardBytes; break;
      case 4: limit = ~uint64_t{0}; break;
      default: limit = in_->bits(3); break;
    }
    const auto d = static_cast<xal_device_t>(p.handle);
    const xal_status_t s = xal_device_set_memory_limit(d, limit);
    const bool over = limit != 0 && used > limit;
    expect(s, p.index < 0 ? refused(m_) : over ? XAL_ERROR_OUT_OF_MEMORY : XAL_SUCCESS,
           "xal_device_set_memory_limit");
    expect_detail(s, "xal_device_set_memory_limit");
    if (s == XAL_SUCCESS) m_.cards[p.index].limit = limit;
    uint64_t free_bytes = 0, total = 0;
    const xal_status_t i = xal_mem_get_info(d, &free_bytes, &total);
    expect(i, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_mem_get_info");
    if (i != XAL_SUCCESS) return;
    const Card& c = m_.cards[p.index];
    XAL_FUZZ_CHECK(total == (c.limit ? c.limit : kCardBytes), "xal_mem_get_info: wrong total");
    XAL_FUZZ_CHECK(free_bytes <= total && free_bytes <= total - std::min(total, c.used),
                   "xal_mem_get_info: more free than the model leaves");
  }

  // --- memory ---------------------------------------------------------------
  void mem_alloc() {
    if (m_.live_allocs() >= kMaxLive) return;
    const Pick p = pick_card(*in_, m_);
    uint64_t bytes = 0;
    switch (in_->byte() % 8) {
      case 0: bytes = 1 + in_->below(256); break;
      case 1: bytes = 1 + in_->below(4096); break;
      case 2: bytes = 1 + in_->below(65536); break;
      case 3: bytes = 1 + in_->bits(3) % kTracked; break;
      case 4: bytes = 0; break;
      case 5: bytes = kCardBytes + 1 + in_->bits(2); break;
      case 6: bytes = (uint64_t{1} << 62) + 1; break;
      default: bytes = ~uint64_t{0}; break;
    }
    xal_devptr_t ptr = 0;
    const xal_status_t s = xal_mem_alloc(static_cast<xal_device_t>(p.handle), bytes, &ptr);
    expect_detail(s, "xal_mem_alloc");
    if (p.index < 0) return expect(s, refused(m_), "xal_mem_alloc");
    if (bytes == 0) return expect(s, XAL_ERROR_INVALID_ARGUMENT, "xal_mem_alloc(0)");
    Card& c = m_.cards[p.index];
    const bool past_limit = c.limit != 0 && (c.used + bytes < c.used || c.used + bytes > c.limit);
    if (past_limit || bytes > kCardBytes || c.used + bytes > kCardBytes)
      return expect(s, XAL_ERROR_OUT_OF_MEMORY, "xal_mem_alloc past the card or limit");
    // Within half the card the arena (best fit, 256-byte aligned) has room.
    if (c.used + bytes <= kCardBytes / 2) expect(s, XAL_SUCCESS, "xal_mem_alloc");
    if (s != XAL_SUCCESS) return expect(s, XAL_ERROR_OUT_OF_MEMORY, "xal_mem_alloc");
    XAL_FUZZ_CHECK(ptr != 0 && ptr % 256 == 0, "an allocation not 256-byte aligned");
    XAL_FUZZ_CHECK(m_.holding(static_cast<uint32_t>(p.index), ptr, 1) == nullptr &&
                       m_.holding(static_cast<uint32_t>(p.index), ptr + bytes - 1, 1) == nullptr,
                   "an allocation overlapping a live one");
    Alloc a{static_cast<uint32_t>(p.index), ptr, bytes};
    if (bytes <= kTracked) {
      a.bytes.assign(bytes, 0);
      a.known.assign(bytes, 0);
    }
    m_.allocs.push_back(std::move(a));
    c.used += bytes;
  }

  void mem_free() {
    const Pick p = pick_card(*in_, m_);
    const Range r = pick_range(*in_, m_, p.index < 0 ? 0 : static_cast<uint32_t>(p.index));
    const uint64_t ptr = in_->byte() % 2 ? r.ptr : r.ptr - r.ptr % 256;
    Alloc* a = p.index < 0 ? nullptr : m_.holding(static_cast<uint32_t>(p.index), ptr, 1);
    if (a && a->ptr != ptr) a = nullptr;
    if (a && a->pending >= 0) synced_call(static_cast<size_t>(a->pending));
    const xal_status_t s = xal_mem_free(static_cast<xal_device_t>(p.handle), ptr);
    expect(s, p.index < 0 ? refused(m_) : a ? XAL_SUCCESS : XAL_ERROR_INVALID_ARGUMENT,
           "xal_mem_free");
    expect_detail(s, "xal_mem_free");
    if (!a) return;
    a->live = false;
    m_.cards[a->device].used -= a->size;
  }

  // --- copies ---------------------------------------------------------------
  // Before queueing on stream `s` work on `a`, work of another stream on it
  // is waited for (as a correct program does); then it is `s`'s.
  void claim(Alloc* a, size_t s) {
    if (!a) return;
    if (a->pending >= 0 && static_cast<size_t>(a->pending) != s)
      synced_call(static_cast<size_t>(a->pending));
    a->pending = static_cast<int>(s);
  }

  // The status of a queued operation on stream `p` over the ranges: the
  // stream's handle, then 0 bytes, then each range on its device.
  xal_status_t queued_status(const Pick& p, uint64_t bytes, std::initializer_list<bool> inside) {
    if (p.index < 0) return refused(m_);
    if (bytes == 0) return XAL_SUCCESS;
    for (bool ok : inside)
      if (!ok) return XAL_ERROR_OUT_OF_BOUNDS;
    return XAL_SUCCESS;
  }

  void write() {
    const Pick p = pick_stream(*in_, m_);
    const uint32_t dev = p.index < 0 ? 0 : m_.streams[p.index].device;
    const Range r = pick_range(*in_, m_, dev);
    Alloc* a = p.index < 0 ? nullptr : m_.holding(dev, r.ptr, r.bytes);
    const xal_status_t want = queued_status(p, r.bytes, {a != nullptr});
    const bool fill = in_->byte() % 2;
    const uint8_t seed = in_->byte();
    std::vector<uint8_t> src(want == XAL_SUCCESS ? r.bytes : std::min<uint64_t>(r.bytes, 64));
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(seed + i * 7);
    if (want == XAL_SUCCESS && r.bytes) claim(a, static_cast<size_t>(p.index));
    const auto st = static_cast<xal_stream_t>(p.handle);
    const xal_status_t s = fill ? xal_memset(st, r.ptr, seed, r.bytes)
                                : xal_memcpy_htod(st, r.ptr, src.data(), r.bytes);
    expect(s, want, fill ? "xal_memset" : "xal_memcpy_htod");
    expect_detail(s, "write");
    if (s != XAL_SUCCESS || r.bytes == 0) return;
    if (a->tracked()) {
      const uint64_t off = r.ptr - a->ptr;
      for (uint64_t i = 0; i < r.bytes; ++i) a->bytes[off + i] = fill ? seed : src[i];
      std::fill_n(a->known.begin() + static_cast<ptrdiff_t>(off), r.bytes, 1);
    }
    if (!fill) m_.streams[p.index].staged.push_back(std::move(src));
  }

  void read() {
    const Pick p = pick_stream(*in_, m_);
    const uint32_t dev = p.index < 0 ? 0 : m_.streams[p.index].device;
    const Range r = pick_range(*in_, m_, dev);
    Alloc* a = p.index < 0 ? nullptr : m_.holding(dev, r.ptr, r.bytes);
    const xal_status_t want = queued_status(p, r.bytes, {a != nullptr});
    std::vector<uint8_t> dst(want == XAL_SUCCESS ? r.bytes : std::min<uint64_t>(r.bytes, 64));
    if (want == XAL_SUCCESS && r.bytes) claim(a, static_cast<size_t>(p.index));
    const xal_status_t s =
        xal_memcpy_dtoh(static_cast<xal_stream_t>(p.handle), dst.data(), r.ptr, r.bytes);
    expect(s, want, "xal_memcpy_dtoh");
    expect_detail(s, "xal_memcpy_dtoh");
    if (s != XAL_SUCCESS || r.bytes == 0) return;
    synced_call(static_cast<size_t>(p.index));
    if (!a->tracked()) return;
    const uint64_t off = r.ptr - a->ptr;
    for (uint64_t i = 0; i < r.bytes; ++i)
      if (a->known[off + i])
        XAL_FUZZ_CHECK(dst[i] == a->bytes[off + i],
                       "byte " + std::to_string(off + i) + " of an allocation read back wrong");
  }

  // Copies within one allocation may overlap: modelled as memmove.
  static void model_copy(Alloc* dst, uint64_t dst_ptr, const Alloc* src, uint64_t src_ptr,
                         uint64_t bytes) {
    if (!dst->tracked()) return;
    const uint64_t d = dst_ptr - dst->ptr;
    if (!src->tracked()) {
      std::fill_n(dst->known.begin() + static_cast<ptrdiff_t>(d), bytes, 0);
      return;
    }
    const uint64_t s = src_ptr - src->ptr;
    std::memmove(dst->bytes.data() + d, src->bytes.data() + s, bytes);
    std::memmove(dst->known.data() + d, src->known.data() + s, bytes);
  }

  void dtod() {
    const Pick p = pick_stream(*in_, m_);
    const uint32_t dev = p.index < 0 ? 0 : m_.streams[p.index].device;
    const Range r = pick_range(*in_, m_, dev);
    const Range from = pick_range(*in_, m_, dev);
    Alloc* a = p.index < 0 ? nullptr : m_.holding(dev, r.ptr, r.bytes);
    Alloc* b = p.index < 0 ? nullptr : m_.holding(dev, from.ptr, r.bytes);
    const xal_status_t want = queued_status(p, r.bytes, {a != nullptr, b != nullptr});
    if (want == XAL_SUCCESS && r.bytes) {
      claim(a, static_cast<size_t>(p.index));
      claim(b, static_cast<size_t>(p.index));
    }
    const xal_status_t s =
        xal_memcpy_dtod(static_cast<xal_stream_t>(p.handle), r.ptr, from.ptr, r.bytes);
    expect(s, want, "xal_memcpy_dtod");
    expect_detail(s, "xal_memcpy_dtod");
    if (s == XAL_SUCCESS && r.bytes) model_copy(a, r.ptr, b, from.ptr, r.bytes);
  }

  void peer() {
    const Pick p = pick_stream(*in_, m_);
    const Pick dd = pick_card(*in_, m_);
    const Pick sd = pick_card(*in_, m_);
    const Range r = pick_range(*in_, m_, dd.index < 0 ? 0 : static_cast<uint32_t>(dd.index));
    const Range from = pick_range(*in_, m_, sd.index < 0 ? 0 : static_cast<uint32_t>(sd.index));
    xal_status_t want = XAL_SUCCESS;
    Alloc* a = nullptr;
    Alloc* b = nullptr;
    if (p.index < 0 || dd.index < 0 || sd.index < 0) {
      want = refused(m_);
    } else {
      const auto dev = static_cast<int>(m_.streams[p.index].device);
      a = m_.holding(static_cast<uint32_t>(dd.index), r.ptr, r.bytes);
      b = m_.holding(static_cast<uint32_t>(sd.index), from.ptr, r.bytes);
      want = dev != dd.index && dev != sd.index ? XAL_ERROR_INVALID_ARGUMENT
                                                : queued_status(p, r.bytes, {a != nullptr, b != nullptr});
    }
    if (want == XAL_SUCCESS && r.bytes) {
      claim(a, static_cast<size_t>(p.index));
      claim(b, static_cast<size_t>(p.index));
    }
    const xal_status_t s = xal_memcpy_peer(
        static_cast<xal_stream_t>(p.handle), static_cast<xal_device_t>(dd.handle), r.ptr,
        static_cast<xal_device_t>(sd.handle), from.ptr, r.bytes);
    expect(s, want, "xal_memcpy_peer");
    expect_detail(s, "xal_memcpy_peer");
    if (s == XAL_SUCCESS && r.bytes) model_copy(a, r.ptr, b, from.ptr, r.bytes);
  }

  // --- streams and events ---------------------------------------------------
  void stream_create() {
    if (live_streams(m_).size() >= kMaxLive / 3) return;
    const Pick p = pick_card(*in_, m_);
    const uint32_t flags = in_->byte() % 4 == 0 ? 0x80u : XAL_STREAM_NON_BLOCKING;
    xal_stream_t st = nullptr;
    const xal_status_t s = xal_stream_create(static_cast<xal_device_t>(p.handle), flags, &st);
    expect(s, p.index < 0 ? refused(m_) : flags == 0x80u ? XAL_ERROR_INVALID_ARGUMENT : XAL_SUCCESS,
           "xal_stream_create");
    expect_detail(s, "xal_stream_create");
    if (s == XAL_SUCCESS) m_.streams.push_back({static_cast<uint32_t>(p.index), st});
  }

  void stream_destroy() {
    const Pick p = pick_stream(*in_, m_);
    const xal_status_t s = xal_stream_destroy(static_cast<xal_stream_t>(p.handle));
    expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_stream_destroy");
    if (s == XAL_SUCCESS) forget(m_.streams[p.index]);
  }

  void stream_wait() {
    const Pick p = pick_stream(*in_, m_);
    const auto st = static_cast<xal_stream_t>(p.handle);
    if (in_->byte() % 2) {
      const xal_status_t s = xal_stream_query(st);
      if (p.index < 0) return expect(s, refused(m_), "xal_stream_query");
      XAL_FUZZ_CHECK(s == XAL_SUCCESS || s == XAL_NOT_READY,
                     std::string("xal_stream_query: ") + xal_status_name(s));
      return;
    }
    expect(xal_stream_synchronize(st), p.index < 0 ? refused(m_) : XAL_SUCCESS,
           "xal_stream_synchronize");
    if (p.index >= 0) synced(static_cast<size_t>(p.index));
  }

  void event_create() {
    if (live_events(m_).size() >= kMaxLive / 3) return;
    const Pick p = pick_card(*in_, m_);
    const uint32_t flags = in_->byte() % 3 == 0 ? XAL_EVENT_DISABLE_TIMING : 0u;
    xal_event_t e = nullptr;
    const xal_status_t s = xal_event_create(static_cast<xal_device_t>(p.handle), flags, &e);
    expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_event_create");
    if (s == XAL_SUCCESS) m_.events.push_back({static_cast<uint32_t>(p.index), e});
  }

  void event_destroy() {
    const Pick p = pick_event(*in_, m_);
    const xal_status_t s = xal_event_destroy(static_cast<xal_event_t>(p.handle));
    expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_event_destroy");
    if (s == XAL_SUCCESS) forget(m_.events[p.index]);
  }

  void event_use() {
    const Pick e = pick_event(*in_, m_);
    const auto ev = static_cast<xal_event_t>(e.handle);
    const Pick p = pick_stream(*in_, m_);
    const auto st = static_cast<xal_stream_t>(p.handle);
    xal_status_t s = XAL_SUCCESS;
    switch (in_->byte() % 5) {
      case 0: {
        s = xal_event_record(ev, st);
        const bool same = e.index >= 0 && p.index >= 0 &&
                          m_.events[e.index].device == m_.streams[p.index].device;
        expect(s, e.index < 0 || p.index < 0 ? refused(m_)
                  : same ? XAL_SUCCESS : XAL_ERROR_INVALID_ARGUMENT,
               "xal_event_record");
        break;
      }
      case 1:
        s = xal_stream_wait_event(st, ev);
        expect(s, e.index < 0 || p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_stream_wait_event");
        break;
      case 2:
        s = xal_event_synchronize(ev);
        expect(s, e.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_event_synchronize");
        break;
      case 3:
        s = xal_event_query(ev);
        if (e.index < 0) expect(s, refused(m_), "xal_event_query");
        else XAL_FUZZ_CHECK(s == XAL_SUCCESS || s == XAL_NOT_READY, "xal_event_query");
        break;
      default: {
        const Pick other = pick_event(*in_, m_);
        float ms = 0;
        s = xal_event_elapsed_ms(ev, static_cast<xal_event_t>(other.handle), &ms);
        if (e.index < 0 || other.index < 0) expect(s, refused(m_), "xal_event_elapsed_ms");
        else if (m_.events[e.index].device != m_.events[other.index].device)
          expect(s, XAL_ERROR_INVALID_ARGUMENT, "xal_event_elapsed_ms across devices");
      }
    }
    expect_detail(s, "event");
  }

  // --- bookkeeping ------------------------------------------------------------
  void retire(void* handle) {
    if (m_.stale.size() < 64) m_.stale.push_back(handle);
  }
  void forget(Stream& st) {
    if (!st.live) return;
    st.live = false;
    retire(st.handle);
    const auto index = static_cast<int>(&st - m_.streams.data());
    for (Alloc& a : m_.allocs)
      if (a.pending == index) a.pending = -1;
    st.staged.clear();
  }
  void forget(Event& e) {
    if (!e.live) return;
    e.live = false;
    retire(e.handle);
  }
  // The stream's queued work is done.
  void synced(size_t s) {
    for (Alloc& a : m_.allocs)
      if (a.pending == static_cast<int>(s)) a.pending = -1;
    m_.streams[s].staged.clear();
  }
  void synced_call(size_t s) {
    expect(xal_stream_synchronize(m_.streams[s].handle), XAL_SUCCESS, "xal_stream_synchronize");
    synced(s);
  }
  void device_sync_all() {
    for (size_t i = 0; i < m_.streams.size(); ++i)
      if (m_.streams[i].live) synced_call(i);
  }

  Choices* in_ = nullptr;
  Model m_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("XAL_MOCK_DEVICES", R"([{"profile": "l4", "count": 2, "memory": "64MiB"}])", 1);
  for (const char* v : {"XAL_FAULT_PLAN", "XAL_FAULTS", "XAL_DEVICE_SELECTOR", "XAL_MEMORY_LIMIT",
                        "XAL_PARTITIONS", "XAL_QUOTA_LEDGER", "XAL_TRACE"})
    unsetenv(v);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Choices input(data, size);
  Sequence().run(input);
  return 0;
}
