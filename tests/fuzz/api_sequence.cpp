// Sequences of public ABI calls on two mock cards, decoded from the input:
// init and shutdown (again and again), device queries, allocations of any
// size (0, huge, past the card), frees, copies and memsets at any offset
// and length, peer copies, streams and events, limits and resets, modules
// and kernel launches, partitions, communicators on random subsets of the
// devices with collectives, point-to-point, split and dup, with handles
// chosen from live, destroyed and forged ones. Every status is checked
// against the shadow model (api_model.hpp) and the documented statuses of
// xal.h, and every byte read back against the model. An input that starts
// with kFaultMode runs on fault:mock with a random plan (api_faults.cpp).
// XAL_FUZZ_TRACE=1 prints each checked call and its status.
#include <algorithm>
#include <cstdlib>

#include "api_sequence.hpp"

#if !defined(XAL_FUZZ_MOCK_PLUGIN) || !defined(XAL_FUZZ_PLUGIN_DIR)
#error "XAL_FUZZ_MOCK_PLUGIN and XAL_FUZZ_PLUGIN_DIR (the mock plugin and its folder) must be defined"
#endif

namespace xal::fuzz {

Sequence::~Sequence() {
  fault_watch(false);
  if (m_.initialised) expect(xal_shutdown(), XAL_SUCCESS, "xal_shutdown at the end");
}

void Sequence::run(Choices& input) {
  if (input.peek() == kFaultMode) {
    Choices head = input.take(kStepBytes);
    head.byte();
    decode_plan(head);
  }
  Choices none(nullptr, 0);
  in_ = &none;
  init();
  for (int steps = 0; steps < 200 && !input.done(); ++steps) {
    Choices choices = input.take(kStepBytes);
    in_ = &choices;
    step(choices.byte() % 36);
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
    case 19: reset(); break;
    case 20: module_load(); break;
    case 21: module_unload(); break;
    case 22: kernel_get(); break;
    case 23: case 24: kernel_launch(); break;
    case 25: partition(); break;
    case 26: unpartition(); break;
    case 27: comm_create(); break;
    case 28: comm_destroy(); break;
    case 29: collective(); break;
    case 30: comm_misuse(); break;
    case 31: fault_control(); break;
    case 32: mem_import(); break;
    case 33: stream_import(); break;
    case 34: host_register(); break;
    default: ipc_handles(); break;
  }
}

void Sequence::init() {
  xal_init_options_t o{};
  o.struct_size = sizeof o;
  o.backends = faults_ ? "fault:mock" : XAL_FUZZ_MOCK_PLUGIN;
  o.backend_path = XAL_FUZZ_PLUGIN_DIR;
  o.validation = 1;
  const xal_status_t s = xal_init(&o);
  expect(s, m_.initialised ? XAL_ERROR_INVALID_ARGUMENT : XAL_SUCCESS, "xal_init");
  expect_detail(s, "xal_init");
  if (m_.initialised) return;
  m_.initialised = true;
  uint32_t n = 0;
  expect(xal_device_count(&n), XAL_SUCCESS, "xal_device_count");
  XAL_FUZZ_CHECK(n == kDevices, "xal_device_count gave " + std::to_string(n));
  m_.cards.assign(kDevices, Card{});
  for (uint32_t i = 0; i < kDevices; ++i)
    expect(xal_device_get(i, &m_.cards[i].handle), XAL_SUCCESS, "xal_device_get");
  if (faults_) load_plan();
  // A stream per card to start with.
  for (uint32_t i = 0; i < kDevices; ++i) {
    xal_stream_t st = nullptr;
    const xal_status_t c = xal_stream_create(m_.cards[i].handle, XAL_STREAM_DEFAULT, &st);
    expect(c, XAL_SUCCESS, "xal_stream_create");
    if (c == XAL_SUCCESS) m_.streams.push_back({i, st});
  }
}

void Sequence::shutdown() {
  fault_watch(false);  // shutdown succeeds whatever its teardown calls return
  const xal_status_t s = xal_shutdown();
  expect(s, m_.initialised ? XAL_SUCCESS : XAL_ERROR_NOT_INITIALIZED, "xal_shutdown");
  expect_detail(s, "xal_shutdown");
  if (!m_.initialised) return;
  m_.initialised = false;
  for (const Card& c : m_.cards) retire(c.handle);
  for (Alloc& a : m_.allocs) a.live = false;
  for (Stream& st : m_.streams) forget(st);
  for (Event& e : m_.events) forget(e);
  for (Module& mod : m_.modules) forget(mod);
  for (CommSet& set : m_.comms)
    for (size_t r = 0; r < set.comms.size(); ++r)
      if (set.live[r]) {
        set.live[r] = false;
        retire(set.comms[r]);
      }
  m_.cards.clear();
  m_.registered.clear();
}

void Sequence::device_queries() {
  const uint32_t index = static_cast<uint32_t>(in_->below(8));
  xal_device_t d = nullptr;
  const xal_status_t g = xal_device_get(index, &d);
  const uint32_t count = m_.initialised ? m_.device_count() : 0;
  expect(g, !m_.initialised ? XAL_ERROR_NOT_INITIALIZED
            : index < count ? XAL_SUCCESS : XAL_ERROR_INVALID_ARGUMENT,
         "xal_device_get");
  if (g == XAL_SUCCESS)
    for (size_t k = 0; k < m_.cards.size(); ++k)
      if (m_.cards[k].live && m_.global_index(k) == index)
        XAL_FUZZ_CHECK(d == m_.cards[k].handle, "xal_device_get gave another device's handle");
  if (m_.initialised) {
    uint32_t n = 0;
    expect(xal_device_count(&n), XAL_SUCCESS, "xal_device_count");
    XAL_FUZZ_CHECK(n == count, "xal_device_count gave " + std::to_string(n) + ", the model " +
                                   std::to_string(count));
  }
  const Pick p = pick_card(*in_, m_);
  xal_device_properties_t props{};
  const bool too_small = in_->byte() % 4 == 0;  // a struct_size below every version
  props.struct_size = too_small ? 4 : sizeof props;
  const xal_status_t s = xal_device_get_properties(static_cast<xal_device_t>(p.handle), &props);
  const xal_status_t want = p.index < 0 ? refused(m_)
                            : too_small ? XAL_ERROR_INVALID_ARGUMENT : XAL_SUCCESS;
  expect(s, want, "xal_device_get_properties");
  expect_detail(s, "xal_device_get_properties");
  if (s != XAL_SUCCESS) return;
  const Card& c = m_.cards[p.index];
  XAL_FUZZ_CHECK(props.memory_bytes == c.bytes, "a device of another size");
  XAL_FUZZ_CHECK(props.parent_index == (c.partition() ? static_cast<int32_t>(c.parent) : -1),
                 "parent_index is " + std::to_string(props.parent_index));
  XAL_FUZZ_CHECK(((props.capabilities & XAL_DEVICE_CAP_PARTITION) != 0) == c.partition(),
                 "XAL_DEVICE_CAP_PARTITION on a whole card, or not on a partition");
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

// Reset of a card: every allocation, stream, event and module of it and of
// its partitions goes, its communicators are aborted. A partition refuses.
void Sequence::reset() {
  device_sync_all();
  const Pick p = pick_card(*in_, m_);
  const bool part = p.index >= 0 && m_.cards[p.index].partition();
  const xal_status_t s = xal_device_reset(static_cast<xal_device_t>(p.handle));
  expect(s, p.index < 0 ? refused(m_) : part ? XAL_ERROR_NOT_SUPPORTED : XAL_SUCCESS,
         "xal_device_reset");
  expect_detail(s, "xal_device_reset");
  if (s != XAL_SUCCESS) return;
  const auto dev = static_cast<uint32_t>(p.index);
  for (CommSet& set : m_.comms)
    for (uint32_t slot : set.devices)
      if (m_.card_of(slot) == dev) set.aborted = true;
  for (size_t k = 0; k < m_.cards.size(); ++k)
    if (m_.cards[k].live && m_.card_of(static_cast<uint32_t>(k)) == dev)
      release_objects(static_cast<uint32_t>(k));
}

// The allocations, streams, events and modules of `slot` are gone.
void Sequence::release_objects(uint32_t slot) {
  for (Alloc& a : m_.allocs)
    if (a.device == slot) a.live = false;
  for (Stream& st : m_.streams)
    if (st.device == slot) forget(st);
  for (Event& e : m_.events)
    if (e.device == slot) forget(e);
  for (Module& mod : m_.modules)
    if (mod.device == slot) forget(mod);
  m_.cards[slot].used = 0;
}

void Sequence::limits() {
  const Pick p = pick_card(*in_, m_);
  const uint64_t used = p.index < 0 ? 0 : m_.cards[p.index].used;
  const bool part = p.index >= 0 && m_.cards[p.index].partition();
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
  // A partition's limit is at most its size; 0 sets it back to its size.
  const bool past = part && limit > m_.cards[p.index].bytes;
  const uint64_t effective = part && limit == 0 ? m_.cards[p.index].bytes : limit;
  const bool over = effective != 0 && used > effective;
  expect(s, p.index < 0 ? refused(m_)
            : past ? XAL_ERROR_INVALID_ARGUMENT
            : over ? XAL_ERROR_OUT_OF_MEMORY : XAL_SUCCESS,
         "xal_device_set_memory_limit");
  expect_detail(s, "xal_device_set_memory_limit");
  if (s == XAL_SUCCESS) m_.cards[p.index].limit = effective;
  uint64_t free_bytes = 0, total = 0;
  const xal_status_t i = xal_mem_get_info(d, &free_bytes, &total);
  expect(i, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_mem_get_info");
  if (i != XAL_SUCCESS) return;
  const Card& c = m_.cards[p.index];
  XAL_FUZZ_CHECK(total == (c.limit ? c.limit : c.bytes), "xal_mem_get_info: wrong total");
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

void Sequence::forget(Module& mod) {
  if (!mod.live) return;
  mod.live = false;
  retire(mod.handle);
  const auto index = static_cast<size_t>(&mod - m_.modules.data());
  for (const Kernel& k : m_.kernels)
    if (k.module == index) retire(k.handle);
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
