// Steps of the API-sequence target on partitions: a card split into 1-4
// partitions of random sizes and shares (some that cannot fit, some on a
// card still in use, some of a partition), listed after the cards; undone
// when their objects are gone, or refused while they hold some.
#include <algorithm>
#include <string>
#include <vector>

#include "api_sequence.hpp"

namespace xal::fuzz {

void Sequence::partition() {
  const Pick p = pick_card(*in_, m_);
  // Most of the time the card is first emptied, as a program would.
  if (p.index >= 0 && !m_.cards[p.index].partition() && in_->byte() % 4 != 3) {
    const auto slot = static_cast<uint32_t>(p.index);
    for (size_t i = 0; i < m_.streams.size(); ++i)
      if (m_.streams[i].live && m_.streams[i].device == slot) {
        synced_call(i);
        destroy_stream(i);
      }
    for (Alloc& a : m_.allocs)
      if (a.live && a.device == slot) {
        if (a.pending >= 0) synced_call(static_cast<size_t>(a.pending));
        const xal_status_t s = xal_mem_free(m_.cards[slot].handle, a.ptr);
        expect(s, XAL_SUCCESS, "xal_mem_free");
        if (s != XAL_SUCCESS) continue;
        a.live = false;
        if (!a.imported) m_.cards[slot].used -= a.size;
      }
  }
  // 1-4 descriptors (or none, or 65: past the most); sizes of a few MiB,
  // or past what is left; shares 0 (an equal part of the rest) to 120.
  const auto k = static_cast<uint32_t>(in_->below(6));
  const bool too_many = k == 5;
  const uint32_t n = too_many ? 65 : k == 4 ? 0 : k + 1;
  std::vector<xal_partition_desc_t> descs(std::max<uint32_t>(n, 1));
  uint64_t bytes = 0;
  uint32_t given = 0, open = 0;
  bool bad_desc = false;
  for (uint32_t i = 0; i < n; ++i) {
    xal_partition_desc_t& d = descs[i];
    d.struct_size = sizeof d;
    const uint8_t c = too_many ? 0 : in_->byte();
    d.memory_bytes = c % 16 == 15 ? 0 : c % 16 == 14 ? kCardBytes : (uint64_t{1} + c % 8) << 20;
    d.compute_percent = too_many ? 1 : in_->byte() % 4 == 0 ? 0 : static_cast<uint32_t>(in_->below(120));
    bad_desc |= d.memory_bytes == 0 || d.compute_percent > 100;
    bytes += d.memory_bytes;
    given += d.compute_percent;
    open += d.compute_percent == 0;
  }
  if (n > 1 && in_->byte() % 16 == 15) {  // descriptors of two sizes
    descs[1].struct_size = sizeof(xal_partition_desc_t) + 8;
    bad_desc = true;
  }
  std::vector<xal_device_t> out(std::max<uint32_t>(n, 1));
  const xal_status_t s =
      xal_device_partition(static_cast<xal_device_t>(p.handle), n, descs.data(), out.data());
  expect_detail(s, "xal_device_partition");
  if (p.index < 0) return expect(s, refused(m_), "xal_device_partition");
  const auto slot = static_cast<uint32_t>(p.index);
  const Card& c = m_.cards[slot];
  bool busy = c.used != 0;
  for (const Stream& st : m_.streams) busy |= st.live && st.device == slot;
  for (const Alloc& a : m_.allocs) busy |= a.live && a.device == slot;
  const uint64_t room = c.limit ? std::min(c.limit, kCardBytes) : kCardBytes;
  const bool refused_plan = n == 0 || too_many || bad_desc || given > 100 ||
                            (open && given + open > 100) || bytes > room;
  if (refused_plan || c.partition() || c.partitioned || busy)
    return expect(s, XAL_ERROR_INVALID_ARGUMENT, "xal_device_partition");
  expect(s, XAL_SUCCESS, "xal_device_partition");
  if (s != XAL_SUCCESS) return;
  m_.cards[slot].partitioned = true;
  for (uint32_t i = 0; i < n; ++i) {
    Card part;
    part.handle = out[i];
    part.parent = static_cast<int>(slot);
    part.bytes = descs[i].memory_bytes;
    part.limit = descs[i].memory_bytes;
    m_.cards.push_back(part);
    XAL_FUZZ_CHECK(out[i] != nullptr, "xal_device_partition wrote a NULL handle");
  }
}

void Sequence::unpartition() {
  const Pick p = pick_card(*in_, m_);
  // Most of the time the partitions are first emptied.
  const bool clean = in_->byte() % 4 != 3;
  if (p.index >= 0 && clean)
    for (size_t k = 0; k < m_.cards.size(); ++k)
      if (m_.cards[k].live && m_.cards[k].parent == p.index) {
        const auto slot = static_cast<uint32_t>(k);
        device_sync_all();
        for (Alloc& a : m_.allocs)
          if (a.live && a.device == slot &&
              xal_mem_free(m_.cards[slot].handle, a.ptr) == XAL_SUCCESS) {
            a.live = false;
            if (!a.imported) m_.cards[slot].used -= a.size;
          }
        for (size_t i = 0; i < m_.streams.size(); ++i)
          if (m_.streams[i].live && m_.streams[i].device == slot) destroy_stream(i);
        for (Event& e : m_.events)
          if (e.live && e.device == slot && xal_event_destroy(e.handle) == XAL_SUCCESS) forget(e);
        // Modules and communicators go even when the backend fails.
        for (Module& mod : m_.modules)
          if (mod.live && mod.device == slot) {
            (void)xal_module_unload(mod.handle);
            forget(mod);
          }
        for (CommSet& set : m_.comms)
          for (size_t r = 0; r < set.comms.size(); ++r)
            if (set.live[r] && set.devices[r] == slot) {
              (void)xal_comm_destroy(set.comms[r]);
              set.live[r] = false;
              retire(set.comms[r]);
            }
        injected_since_last_check();  // the frees above may have met injections
      }
  const xal_status_t s = xal_device_unpartition(static_cast<xal_device_t>(p.handle));
  expect_detail(s, "xal_device_unpartition");
  if (p.index < 0) return expect(s, refused(m_), "xal_device_unpartition");
  bool held = false;
  for (size_t k = 0; k < m_.cards.size(); ++k) {
    if (!m_.cards[k].live || m_.cards[k].parent != p.index) continue;
    const auto slot = static_cast<uint32_t>(k);
    for (const Alloc& a : m_.allocs) held |= a.live && a.device == slot;
    for (const Stream& st : m_.streams) held |= st.live && st.device == slot;
    for (const Event& e : m_.events) held |= e.live && e.device == slot;
    for (const Module& mod : m_.modules) held |= mod.live && mod.device == slot;
    for (const CommSet& set : m_.comms)
      for (size_t r = 0; r < set.comms.size(); ++r)
        held |= set.live[r] && set.devices[r] == slot;
  }
  const bool split = m_.cards[p.index].partitioned;
  expect(s, !split || held ? XAL_ERROR_INVALID_ARGUMENT : XAL_SUCCESS, "xal_device_unpartition");
  if (s != XAL_SUCCESS) return;
  m_.cards[p.index].partitioned = false;
  for (Card& part : m_.cards)
    if (part.live && part.parent == p.index) {
      part.live = false;
      retire(part.handle);
    }
}

}  // namespace xal::fuzz
