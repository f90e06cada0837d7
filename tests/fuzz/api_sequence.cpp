// Sequences of public ABI calls on two mock cards, decoded from the input:
// init and shutdown (again and again), device queries, allocations of any
// size (0, huge, past the card), frees, copies and memsets at any offset
// and length, peer copies, streams and events, limits and resets, with
// handles chosen from live, destroyed and forged ones. Every status is
// checked against the shadow model (api_model.hpp) and the documented
// statuses of xal.h, and every byte read back against the model.
#include <cstdlib>

#include "api_sequence.hpp"

#ifndef XAL_FUZZ_MOCK_PLUGIN
#error "XAL_FUZZ_MOCK_PLUGIN (the mock plugin's path) must be defined"
#endif

namespace xal::fuzz {

Sequence::~Sequence() {
  if (m_.initialised) expect(xal_shutdown(), XAL_SUCCESS, "xal_shutdown at the end");
}

void Sequence::run(Choices& input) {
  Choices none(nullptr, 0);
  in_ = &none;
  init();
  for (int steps = 0; steps < 200 && !input.done(); ++steps) {
    Choices choices = input.take(kStepBytes);
    in_ = &choices;
    step(choices.byte() % 20);
  }
}

void Sequence::step(uint8_t op) {
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

void Sequence::init() {
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

void Sequence::shutdown() {
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

void Sequence::device_queries() {
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

void Sequence::device_sync() {
  const Pick p = pick_card(*in_, m_);
  const xal_status_t s = xal_device_synchronize(static_cast<xal_device_t>(p.handle));
  expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_device_synchronize");
  if (s == XAL_SUCCESS)
    for (size_t i = 0; i < m_.streams.size(); ++i)
      if (m_.streams[i].live && m_.streams[i].device == static_cast<uint32_t>(p.index))
        synced(i);
}

// Reset: every allocation, stream and event of the card goes.
void Sequence::reset() {
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

void Sequence::limits() {
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

void Sequence::retire(void* handle) {
  if (m_.stale.size() < 64) m_.stale.push_back(handle);
}

void Sequence::forget(Stream& st) {
  if (!st.live) return;
  st.live = false;
  retire(st.handle);
  const auto index = static_cast<int>(&st - m_.streams.data());
  for (Alloc& a : m_.allocs)
    if (a.pending == index) a.pending = -1;
  st.staged.clear();
}

void Sequence::forget(Event& e) {
  if (!e.live) return;
  e.live = false;
  retire(e.handle);
}

// The stream's queued work is done.
void Sequence::synced(size_t s) {
  for (Alloc& a : m_.allocs)
    if (a.pending == static_cast<int>(s)) a.pending = -1;
  m_.streams[s].staged.clear();
}

void Sequence::synced_call(size_t s) {
  expect(xal_stream_synchronize(m_.streams[s].handle), XAL_SUCCESS, "xal_stream_synchronize");
  synced(s);
}

void Sequence::device_sync_all() {
  for (size_t i = 0; i < m_.streams.size(); ++i)
    if (m_.streams[i].live) synced_call(i);
}

}  // namespace xal::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("XAL_MOCK_DEVICES", R"([{"profile": "l4", "count": 2, "memory": "64MiB"}])", 1);
  for (const char* v : {"XAL_FAULT_PLAN", "XAL_FAULTS", "XAL_DEVICE_SELECTOR", "XAL_MEMORY_LIMIT",
                        "XAL_PARTITIONS", "XAL_QUOTA_LEDGER", "XAL_TRACE"})
    unsetenv(v);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xal::fuzz::Choices input(data, size);
  xal::fuzz::Sequence().run(input);
  return 0;
}
