// Steps of the API-sequence target on memory: allocations of every size,
// frees of live, freed and forged pointers, copies and memsets in every
// direction at any offset and length, each byte read back checked.
#include <algorithm>
#include <cstring>
#include <string>

#include "api_sequence.hpp"

namespace xal::fuzz {
namespace {

// Copies within one allocation may overlap: modelled as memmove.
void model_copy(Alloc* dst, uint64_t dst_ptr, const Alloc* src, uint64_t src_ptr,
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

}  // namespace

void Sequence::mem_alloc() {
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
  if (bytes > (uint64_t{1} << 62))
    return expect(s, XAL_ERROR_OUT_OF_MEMORY, "xal_mem_alloc larger than any card");
  if (c.partitioned) return expect(s, XAL_ERROR_INVALID_ARGUMENT, "xal_mem_alloc on a split card");
  const bool past_limit = c.limit != 0 && (c.used + bytes < c.used || c.used + bytes > c.limit);
  const uint64_t card_used = m_.card_used(static_cast<uint32_t>(p.index));
  if (past_limit || bytes > kCardBytes || card_used + bytes > kCardBytes)
    return expect(s, XAL_ERROR_OUT_OF_MEMORY, "xal_mem_alloc past the card or limit");
  // Within half the card the arena (best fit, 256-byte aligned) has room;
  // past that it may be too fragmented.
  const bool fits = card_used + bytes <= kCardBytes / 2;
  expect(s, fits || s == XAL_SUCCESS ? XAL_SUCCESS : XAL_ERROR_OUT_OF_MEMORY, "xal_mem_alloc");
  if (s != XAL_SUCCESS) return;
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

void Sequence::mem_free() {
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
  if (!a || s != XAL_SUCCESS) return;
  a->live = false;
  if (!a->imported) m_.cards[a->device].used -= a->size;
}

// Before queueing on stream `s` work on `a`, work of another stream on it
// is waited for (as a correct program does); then it is `s`'s.
void Sequence::claim(Alloc* a, size_t s) {
  if (!a) return;
  if (a->pending >= 0 && static_cast<size_t>(a->pending) != s)
    synced_call(static_cast<size_t>(a->pending));
  a->pending = static_cast<int>(s);
}

// The status of a queued operation on stream `p` over the ranges: the
// stream's handle, then 0 bytes, then each range on its device.
xal_status_t Sequence::queued_status(const Pick& p, uint64_t bytes,
                                     std::initializer_list<bool> inside) {
  if (p.index < 0) return refused(m_);
  if (bytes == 0) return XAL_SUCCESS;
  for (bool ok : inside)
    if (!ok) return XAL_ERROR_OUT_OF_BOUNDS;
  return XAL_SUCCESS;
}

void Sequence::write() {
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

void Sequence::read() {
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

void Sequence::dtod() {
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

void Sequence::peer() {
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

}  // namespace xal::fuzz
